// Web Push vocabulary shared by the route, the subscription service and delivery (the alert keys are the
// WebPushSubscription entity's: src/entities/settings/push-subscription.ts).
import type { PushPolicy } from "../db/schema";

export type { PushPolicy };

/**
 * One push to send: a notification for one subscription. Ids only; the payload is built (and encrypted) when the job
 * runs. `attempt` counts earlier tries (absent = first), so retries stay bounded when a retry travels as a new message.
 */
export type PushJob = { type: "push"; subscriptionId: string; notificationId: string; attempt?: number };

export const POLICIES: readonly PushPolicy[] = ["all", "followed", "follower", "none"];

/**
 * Thrown by deliverPush when the push service asks to be tried again later (408, 429, 5xx) or cannot be reached.
 * `delaySeconds` honours Retry-After when the service sent one.
 */
export class PushRetry extends Error {
  constructor(
    readonly delaySeconds: number,
    reason: string,
  ) {
    super(`push delivery to be retried in ${delaySeconds}s: ${reason}`);
  }
}
