// NotificationPolicy → Mastodon JSON: the v2 shape (accept | filter | drop per category) and the v1 shape (booleans:
// anything but accept is "filter", as Mastodon's REST::V1::NotificationPolicySerializer says).
import type { PolicyValue } from "../../db/schema/index";

export const POLICY_KEYS = ["for_not_following", "for_not_followers", "for_new_accounts", "for_private_mentions", "for_limited_accounts"] as const;
export type PolicyKey = (typeof POLICY_KEYS)[number];

/** Counts above this are not meaningful to show (Mastodon's MAX_MEANINGFUL_COUNT), for requests and per request. */
export const MAX_MEANINGFUL_COUNT = 100;

export interface PolicyView {
  values: Record<PolicyKey, PolicyValue>;
  pendingRequestsCount: number;
  pendingNotificationsCount: number;
}

export interface MastodonNotificationPolicySummary {
  pending_requests_count: number;
  pending_notifications_count: number;
}

/** NotificationPolicy (v2): accept, filter or drop per category of sender. */
export type MastodonNotificationPolicy = Record<PolicyKey, PolicyValue> & { summary: MastodonNotificationPolicySummary };

/** V1::NotificationPolicy: whether each category is filtered. */
export interface MastodonNotificationPolicyV1 {
  filter_not_following: boolean;
  filter_not_followers: boolean;
  filter_new_accounts: boolean;
  filter_private_mentions: boolean;
  summary: MastodonNotificationPolicySummary;
}

function summary(p: PolicyView): MastodonNotificationPolicySummary {
  return { pending_requests_count: p.pendingRequestsCount, pending_notifications_count: p.pendingNotificationsCount };
}

export function renderPolicy(p: PolicyView): MastodonNotificationPolicy {
  return { ...p.values, summary: summary(p) };
}

export function renderPolicyV1(p: PolicyView): MastodonNotificationPolicyV1 {
  return {
    filter_not_following: p.values.for_not_following !== "accept",
    filter_not_followers: p.values.for_not_followers !== "accept",
    filter_new_accounts: p.values.for_new_accounts !== "accept",
    filter_private_mentions: p.values.for_private_mentions !== "accept",
    summary: summary(p),
  };
}
