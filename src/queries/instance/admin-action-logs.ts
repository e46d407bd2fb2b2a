// The audit log as staff read it (Mastodon's Admin::ActionLogsController): newest first, paged by id, with who acted.
// One statement per page; each entry names its target as it was when written (human_identifier).
import { desc, eq, lt, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, adminActionLogs } from "../../db/schema";

export interface ActionLogEntry {
  id: string;
  action: string;
  targetType: string;
  targetId: string | null;
  /** The target's name when the entry was written (a handle, a domain, a name); null when it has none. */
  humanIdentifier: string | null;
  createdAt: number;
  actor: string | null;
}

/** At most `limit` entries older than `maxId` (all when null). */
export async function actionLogPage(db: DB, maxId: string | null, limit: number): Promise<ActionLogEntry[]> {
  return db
    .select({
      id: adminActionLogs.id,
      action: adminActionLogs.action,
      targetType: adminActionLogs.targetType,
      targetId: adminActionLogs.targetId,
      // Entries written before names were kept (migrations/0046): an account is named by its handle as it reads now.
      humanIdentifier: sql<string | null>`coalesce(${adminActionLogs.humanIdentifier}, CASE WHEN ${adminActionLogs.targetType} = 'Account'
        THEN (SELECT t.username || coalesce('@' || t.domain, '') FROM accounts t WHERE t.id = ${adminActionLogs.targetId}) END)`,
      createdAt: adminActionLogs.createdAt,
      actor: accounts.username,
    })
    .from(adminActionLogs)
    .leftJoin(accounts, eq(accounts.id, adminActionLogs.accountId))
    .where(maxId ? lt(adminActionLogs.id, maxId) : undefined)
    .orderBy(desc(adminActionLogs.id))
    .limit(limit);
}
