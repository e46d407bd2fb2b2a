// Bookmarks: private to their owner, nothing federated.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { bookmarks } from "../../db/schema";
import { loadStatusBundle } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { padId, snowflake } from "../../lib/text/ids";
import { loadVisible, render, renderAnyway, targetOf, type Json, type UndoneStatus } from "./interaction-target";

export async function bookmark(db: DB, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!b.viewer.bookmarked.has(target.id)) {
    const now = Date.now();
    await db.run(sql`INSERT OR IGNORE INTO bookmarks (id, account_id, status_id, created_at)
      VALUES (${padId(snowflake(now))}, ${padId(viewerId)}, ${padId(target.id)}, ${now})`);
    b.viewer.bookmarked.add(target.id);
  }
  return render(cfg, b, target.id);
}

export async function unbookmark(db: DB, cfg: Config, id: string, viewerId: string): Promise<UndoneStatus> {
  const rows = await db
    .delete(bookmarks)
    .where(and(eq(bookmarks.accountId, viewerId), sql`${bookmarks.statusId} = ${targetOf(id)}`))
    .returning({ statusId: bookmarks.statusId });
  const targetId = rows[0]?.statusId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.bookmarked.delete(targetId);
  return rows.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
}
