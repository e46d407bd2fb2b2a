// The audit log as staff read it (Mastodon's Admin::ActionLogsController): newest first, paged by id, with who acted.
// One statement per page.
import { desc, eq, lt } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, adminActionLogs } from "../db/schema";

export interface ActionLogEntry {
  id: string;
  action: string;
  targetType: string;
  targetId: string | null;
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
      createdAt: adminActionLogs.createdAt,
      actor: accounts.username,
    })
    .from(adminActionLogs)
    .leftJoin(accounts, eq(accounts.id, adminActionLogs.accountId))
    .where(maxId ? lt(adminActionLogs.id, maxId) : undefined)
    .orderBy(desc(adminActionLogs.id))
    .limit(limit);
}
