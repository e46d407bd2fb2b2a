// Timeline read positions (Mastodon's Marker): one row per (account, timeline). The version counts changes of
// last_read_id (Mastodon's lock_version), so re-posting the same position is not a change.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { markers } from "../../db/schema";
import type { MarkerRow } from "../../entities/settings/marker";

export const MARKER_TIMELINES = ["home", "notifications"] as const;
export type MarkerTimeline = (typeof MARKER_TIMELINES)[number];

export async function getMarkers(db: DB, accountId: string, timelines: MarkerTimeline[]): Promise<MarkerRow[]> {
  if (!timelines.length) return [];
  return db
    .select()
    .from(markers)
    .where(and(eq(markers.accountId, accountId), inArray(markers.timeline, timelines)));
}

/** Upserts the given positions in one batch and returns the resulting rows. */
export async function saveMarkers(db: DB, accountId: string, positions: Partial<Record<MarkerTimeline, string>>): Promise<MarkerRow[]> {
  const now = Date.now();
  const stmts = Object.entries(positions).map(([timeline, lastReadId]) =>
    db
      .insert(markers)
      .values({ accountId, timeline, lastReadId: lastReadId!, version: 0, updatedAt: now })
      .onConflictDoUpdate({
        target: [markers.accountId, markers.timeline],
        set: {
          version: sql`${markers.version} + (${markers.lastReadId} <> excluded.last_read_id)`,
          updatedAt: sql`CASE WHEN ${markers.lastReadId} <> excluded.last_read_id THEN excluded.updated_at ELSE ${markers.updatedAt} END`,
          lastReadId: sql`excluded.last_read_id`,
        },
      })
      .returning(),
  );
  if (!stmts.length) return [];
  const res = (await db.batch(stmts as [(typeof stmts)[number], ...(typeof stmts)[number][]])) as MarkerRow[][];
  return res.flat();
}
