// Dismissing a notification group (POST /api/v2/notifications/:group_key/dismiss): every notification of the
// viewer's with that group key goes, as Mastodon's `by_group_key(...).destroy_all`; `ungrouped-<id>` is that one
// notification. Filtered mentions that go take their notification request's count with them (trigger, 0004).
import { and, eq, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { notifications } from "../../db/schema";

export async function dismissGroup(db: DB, viewerId: string, key: string): Promise<void> {
  let cond: SQL;
  if (key.startsWith("ungrouped-")) {
    const id = key.slice("ungrouped-".length);
    if (!/^\d{1,19}$/.test(id)) return;
    cond = eq(notifications.id, id);
  } else {
    if (!key || key.length > 100) return;
    cond = eq(notifications.groupKey, key);
  }
  await db.delete(notifications).where(and(eq(notifications.accountId, viewerId), cond));
}
