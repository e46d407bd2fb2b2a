// Web Push vocabulary shared by the route, the subscription service and delivery.
import { NOTIFICATION_TYPES, type PushPolicy } from "../db/schema";

export type { PushPolicy };

/**
 * One push to send: a notification for one subscription. Ids only; the payload is built (and encrypted) when the job
 * runs. `attempt` counts earlier tries (absent = first), so retries stay bounded when a retry travels as a new message.
 */
export type PushJob = { type: "push"; subscriptionId: string; notificationId: string; attempt?: number };

/** Alert keys a subscription can switch on: every notification type can be pushed (Mastodon's alerts). */
export const ALERT_TYPES = NOTIFICATION_TYPES.filter(
  (t): t is Exclude<(typeof NOTIFICATION_TYPES)[number], "quote" | "quoted_update" | "move"> => t !== "quote" && t !== "quoted_update" && t !== "move",
);

export type AlertType = (typeof ALERT_TYPES)[number];

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
