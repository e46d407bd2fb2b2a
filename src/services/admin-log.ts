// The audit log (Mastodon's Admin::ActionLog, written by AccountableConcern#log_action): one row per staff action,
// always a statement in the same batch as the change it records.
import type { DB } from "../db/client";
import { adminActionLogs } from "../db/schema";
import { snowflake } from "../lib/ids";

/** The staff member acting. */
export interface Staff {
  accountId: string;
}

export type LogTarget = "DomainBlock" | "DomainAllow" | "CanonicalEmailBlock" | "EmailDomainBlock" | "IpBlock";

export const adminLogStatement = (db: DB, staff: Staff, action: "create" | "update" | "destroy", targetType: LogTarget, targetId: string, now: number) =>
  db.insert(adminActionLogs).values({ id: snowflake(now), accountId: staff.accountId, action, targetType, targetId, createdAt: now });
