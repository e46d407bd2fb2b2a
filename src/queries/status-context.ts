// GET /api/v1/statuses/:id/context: ancestors (up to 40 levels) and descendants (depth-first, up to 4,096) found by
// recursive queries in ONE batch with the root's visibility check, then rendered in ONE renderStatuses call.
// Loops in reply chains terminate: ancestors by the depth cap, descendants by refusing an id already on the path.
// CROSS JOIN keeps the thread's rows as the outer loop (an index seek per reply), never a scan of statuses.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statuses } from "../db/schema/index";
import { loadStatusBundle, renderStatusFrom } from "../entities/status";
import type { Config } from "../env";
import { notFound } from "../lib/errors";
import { padId, unpadId } from "../lib/ids";
import { hiddenAuthorFor, statusReadableBy } from "../services/visibility";

export const MAX_ANCESTORS = 40;
export const MAX_DESCENDANTS = 4096;
const MAX_DEPTH = 1000;

export async function statusContext(db: DB, cfg: Config, id: string, viewerId: string | null) {
  const p = padId(id);
  const visible = viewerId ? sql`${statusReadableBy(viewerId)} AND NOT ${hiddenAuthorFor(viewerId, statuses.accountId)}` : statusReadableBy(null);
  const [root, anc, desc] = await db.batch([
    db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.id, id), statusReadableBy(viewerId)))
      .limit(1),
    db.all<{ id: string }>(sql`WITH RECURSIVE anc(id, depth) AS (
        SELECT in_reply_to_id, 1 FROM statuses WHERE id = ${p} AND in_reply_to_id IS NOT NULL
        UNION ALL
        SELECT s.in_reply_to_id, anc.depth + 1 FROM anc CROSS JOIN statuses s ON s.id = anc.id
          WHERE s.in_reply_to_id IS NOT NULL AND anc.depth < ${MAX_ANCESTORS}
      )
      SELECT statuses.id AS id FROM anc CROSS JOIN statuses ON statuses.id = anc.id
      WHERE statuses.id <> ${p} AND ${visible} ORDER BY anc.depth DESC`),
    db.all<{ id: string }>(sql`WITH RECURSIVE d(id, path, depth) AS (
        SELECT id, id, 1 FROM statuses WHERE in_reply_to_id = ${p} AND id <> ${p}
        UNION ALL
        SELECT s.id, d.path || '/' || s.id, d.depth + 1 FROM d CROSS JOIN statuses s ON s.in_reply_to_id = d.id
          WHERE s.id <> ${p} AND instr(d.path, s.id) = 0 AND d.depth < ${MAX_DEPTH}
        LIMIT ${MAX_DESCENDANTS}
      )
      SELECT statuses.id AS id FROM d CROSS JOIN statuses ON statuses.id = d.id WHERE ${visible} ORDER BY d.path`),
  ]);
  if (!root.length) throw notFound();
  const ancIds = [...new Set(anc.map((r) => unpadId(String(r.id))))];
  const ancSet = new Set(ancIds);
  const descIds = [...new Set(desc.map((r) => unpadId(String(r.id))))].filter((x) => !ancSet.has(x));
  // Filters apply in the thread context: a `hide` match drops a descendant; ancestors stay, so the thread holds together.
  const b = await loadStatusBundle(db, [...ancIds, ...descIds], viewerId);
  const ancestors = ancIds.map((x) => renderStatusFrom(cfg, b, x, { filterContext: "thread", keepHidden: true })).filter((r) => r !== null);
  const descendants = descIds.map((x) => renderStatusFrom(cfg, b, x, { filterContext: "thread" })).filter((r) => r !== null);
  return { ancestors, descendants };
}
