// The notification policy (Mastodon's NotificationPolicy): per category of sender, accept, filter (held back as a
// notification request) or drop. Applied where notifications are created (notificationWrite); here it is read,
// with its summary of pending requests, and changed. An account without a row has Mastodon's defaults.
import { sql } from "drizzle-orm";
import { runBatch, type DB } from "../../db/client";
import { notificationPolicies, type PolicyValue } from "../../db/schema";
import { padId } from "../../lib/text/ids";
import { MAX_MEANINGFUL_COUNT, POLICY_KEYS, type PolicyKey, type PolicyView } from "../../entities/notifications/notification-policy";

export { POLICY_KEYS, type PolicyKey } from "../../entities/notifications/notification-policy";

export const POLICY_DEFAULTS: Record<PolicyKey, PolicyValue> = {
  for_not_following: "accept",
  for_not_followers: "accept",
  for_new_accounts: "accept",
  for_private_mentions: "filter",
  for_limited_accounts: "filter",
};

const COLUMN: Record<PolicyKey, keyof typeof notificationPolicies.$inferInsert> = {
  for_not_following: "forNotFollowing",
  for_not_followers: "forNotFollowers",
  for_new_accounts: "forNewAccounts",
  for_private_mentions: "forPrivateMentions",
  for_limited_accounts: "forLimitedAccounts",
};

type PolicyRow = Partial<Record<PolicyKey, PolicyValue | null>> & { cnt: number; total: number };

function readStatement(db: DB, accountId: string) {
  const a = padId(accountId);
  const max = sql.raw(String(MAX_MEANINGFUL_COUNT));
  return db.all<PolicyRow>(sql`SELECT p.for_not_following, p.for_not_followers, p.for_new_accounts, p.for_private_mentions, p.for_limited_accounts,
      s.cnt AS cnt, s.total AS total
    FROM (SELECT count(*) AS cnt, coalesce(sum(min(q.notifications_count, ${max})), 0) AS total
          FROM (SELECT r.notifications_count FROM notification_requests r
                WHERE r.account_id = ${a}
                  AND NOT EXISTS (SELECT 1 FROM accounts ra WHERE ra.id = r.from_account_id AND ra.suspended_at IS NOT NULL)
                LIMIT ${max}) q) s
    LEFT JOIN notification_policies p ON p.account_id = ${a}`);
}

function toView(row: PolicyRow | undefined): PolicyView {
  const values = { ...POLICY_DEFAULTS };
  for (const k of POLICY_KEYS) {
    const v = row?.[k];
    if (v === "accept" || v === "filter" || v === "drop") values[k] = v;
  }
  return { values, pendingRequestsCount: Number(row?.cnt ?? 0), pendingNotificationsCount: Number(row?.total ?? 0) };
}

export async function readPolicy(db: DB, accountId: string): Promise<PolicyView> {
  const rows = await readStatement(db, accountId);
  return toView(rows[0]);
}

/** Sets the given categories (the others keep their value) and returns the policy, in one batch. */
export async function updatePolicy(db: DB, accountId: string, changes: Partial<Record<PolicyKey, PolicyValue>>): Promise<PolicyView> {
  const now = Date.now();
  const set: Partial<typeof notificationPolicies.$inferInsert> = { updatedAt: now };
  for (const k of POLICY_KEYS) {
    const v = changes[k];
    if (v) (set as Record<string, unknown>)[COLUMN[k]] = v;
  }
  const [, rows] = await runBatch(db, [
    db
      .insert(notificationPolicies)
      .values({ ...set, accountId, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: notificationPolicies.accountId, set }),
    readStatement(db, accountId),
  ]);
  return toView((rows as PolicyRow[])[0]);
}
