// The audit log (Mastodon's Admin::ActionLog, written by AccountableConcern#log_action): one row per staff action,
// always a statement in the same batch as the change it records.
import type { DB } from "../../db/client";
import { adminActionLogs } from "../../db/schema";
import { snowflake } from "../../lib/text/ids";

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
  | "Form::AdminSettings";

/** The log row of one action (`create`, `update`, `destroy`, `silence`, …) by `staff` on a target (none for a form). */
export const adminLogStatement = (db: DB, staff: Staff, action: string, targetType: LogTarget, targetId: string | null, now: number) =>
  db.insert(adminActionLogs).values({ id: snowflake(now), accountId: staff.accountId, action, targetType, targetId, createdAt: now });

/** `adminLogStatement` for one kind of target, for a service that logs only that kind. */
export const logFor = (targetType: LogTarget) => (db: DB, staff: Staff, action: string, targetId: string, now: number) =>
  adminLogStatement(db, staff, action, targetType, targetId, now);
