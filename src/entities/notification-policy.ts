// NotificationPolicy → Mastodon JSON: the v2 shape (accept | filter | drop per category) and the v1 shape (booleans:
// anything but accept is "filter", as Mastodon's REST::V1::NotificationPolicySerializer says).
import type { PolicyView } from "../services/notifications/notification-policy";

function summary(p: PolicyView) {
  return { pending_requests_count: p.pendingRequestsCount, pending_notifications_count: p.pendingNotificationsCount };
}

export function renderPolicy(p: PolicyView) {
  return { ...p.values, summary: summary(p) };
}

export function renderPolicyV1(p: PolicyView) {
  return {
    filter_not_following: p.values.for_not_following !== "accept",
    filter_not_followers: p.values.for_not_followers !== "accept",
    filter_new_accounts: p.values.for_new_accounts !== "accept",
    filter_private_mentions: p.values.for_private_mentions !== "accept",
    summary: summary(p),
  };
}
