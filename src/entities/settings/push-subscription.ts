// WebPushSubscription entity (docs.joinmastodon.org/entities/WebPushSubscription): the Web Push subscription of an
// access token, with the server's VAPID public key (`server_key`) and the id as a string like every other id. The
// alert keys are defined here, as the entity spells them: every notification type can be pushed.
import { NOTIFICATION_TYPES, type PushPolicy, type webPushSubscriptions } from "../../db/schema/index";

export type SubscriptionRow = typeof webPushSubscriptions.$inferSelect;

/** Types with no alert in Mastodon's subscription: never pushed (`quote` and `quoted_update` have had theirs since 4.5). */
const NO_ALERT = ["move", "added_to_collection", "collection_update"] as const;

/** The keys of `alerts` (Mastodon's alerts, flat: `admin.sign_up`, `admin.report`): every type but those never pushed. */
export const ALERT_TYPES = NOTIFICATION_TYPES.filter(
  (t): t is Exclude<(typeof NOTIFICATION_TYPES)[number], (typeof NO_ALERT)[number]> => !(NO_ALERT as readonly string[]).includes(t),
);

export type AlertType = (typeof ALERT_TYPES)[number];
export type Alerts = Record<AlertType, boolean>;

/** WebPushSubscription; `standard` (added in Mastodon 4.4): the pushes follow RFC 8030, 8291 and 8292. */
export interface MastodonWebPushSubscription {
  id: string;
  endpoint: string;
  standard: boolean;
  alerts: Alerts;
  policy: PushPolicy;
  server_key: string;
}

/** Every alert type, off unless given (Mastodon's documented default). */
export function alertsFrom(given: Partial<Record<AlertType, boolean>>): Alerts {
  const out = {} as Alerts;
  for (const t of ALERT_TYPES) out[t] = given[t] === true;
  return out;
}

export function renderPushSubscription(row: SubscriptionRow, serverKey: string): MastodonWebPushSubscription {
  return {
    id: row.id,
    endpoint: row.endpoint,
    standard: row.standard,
    alerts: alertsFrom(row.alerts as Partial<Alerts>),
    policy: row.policy,
    server_key: serverKey,
  };
}
