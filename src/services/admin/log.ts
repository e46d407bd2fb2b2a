// The audit log (Mastodon's Admin::ActionLog, written by AccountableConcern#log_action): one row per staff action,
// always a statement in the same batch as the change it records.
import { type SQL, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { adminActionLogs } from "../../db/schema";
import { padId, snowflake } from "../../lib/text/ids";

/** The staff member acting. */
export interface Staff {
  accountId: string;
}

/** What admin_action_logs rows point at (Mastodon's target_type). */
export type LogTarget =
  | "User"
  | "Account"
  | "Report"
  | "Tag"
  | "PreviewCard"
  | "Status"
  | "PreviewCardProvider"
  | "DomainBlock"
  | "DomainAllow"
  | "CanonicalEmailBlock"
  | "EmailDomainBlock"
  | "IpBlock"
  | "CustomEmoji"
  | "Announcement"
  | "Rule"
  | "UserRole"
  | "Relay"
  | "Form::AdminSettings";

const ACCT = (a: string) => `${a}.username || coalesce('@' || ${a}.domain, '')`;

/**
 * How each kind of target is named in the log (Mastodon's to_log_human_identifier): a query of one row by the target's
 * id (`?` below), read by the log row's own INSERT. Accounts, users, reports and posts by the handle concerned.
 */
const NAMES: Partial<Record<LogTarget, string>> = {
  Account: `SELECT ${ACCT("a")} FROM accounts a WHERE a.id = ?`,
  User: `SELECT ${ACCT("a")} FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.id = ?`,
  Report: `SELECT ${ACCT("a")} FROM reports r JOIN accounts a ON a.id = r.target_account_id WHERE r.id = ?`,
  Status: `SELECT ${ACCT("a")} FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE s.id = ?`,
  DomainBlock: "SELECT domain FROM domain_blocks WHERE id = ?",
  DomainAllow: "SELECT domain FROM domain_allows WHERE id = ?",
  EmailDomainBlock: "SELECT domain FROM email_domain_blocks WHERE id = ?",
  IpBlock: "SELECT ip FROM ip_blocks WHERE id = ?",
  CustomEmoji: "SELECT shortcode || coalesce('@' || domain, '') FROM custom_emojis WHERE id = ?",
  Announcement: "SELECT substr(text, 1, 80) FROM announcements WHERE id = ?",
  Rule: "SELECT substr(text, 1, 80) FROM rules WHERE id = ?",
  UserRole: "SELECT name FROM user_roles WHERE id = ?",
  Tag: "SELECT display_name FROM tags WHERE id = ?",
  PreviewCard: "SELECT coalesce(nullif(title, ''), url) FROM preview_cards WHERE id = ?",
  PreviewCardProvider: "SELECT domain FROM preview_card_providers WHERE id = ?",
  Relay: "SELECT inbox_url FROM relays WHERE id = ?",
};

/** The target's name as its row says it now; NULL when it has none or is gone. */
function nameOf(targetType: LogTarget, targetId: string | null): SQL | null {
  const query = NAMES[targetType];
  if (!query || !targetId) return null;
  const [before, after] = query.split("?") as [string, string];
  return sql`(${sql.raw(before)}${padId(targetId)}${sql.raw(after)})`;
}

/**
 * The log row of one action (`create`, `update`, `destroy`, `silence`, …) by `staff` on a target (none for a form). The
 * row keeps the target's name (human_identifier) as it reads in the same batch: put it AFTER the statement that creates
 * or renames the target and BEFORE the one that deletes it.
 */
export const adminLogStatement = (db: DB, staff: Staff, action: string, targetType: LogTarget, targetId: string | null, now: number) =>
  db.insert(adminActionLogs).values({
    id: snowflake(now),
    accountId: staff.accountId,
    action,
    targetType,
    targetId,
    humanIdentifier: nameOf(targetType, targetId),
    createdAt: now,
  });

/** `adminLogStatement` for one kind of target, for a service that logs only that kind. */
export const logFor = (targetType: LogTarget) => (db: DB, staff: Staff, action: string, targetId: string, now: number) =>
  adminLogStatement(db, staff, action, targetType, targetId, now);
