// GET /api/v1/statuses/:id/context: ancestors and descendants (depth-first) found by recursive queries in ONE batch
// with the root's visibility check, then rendered in one bundle (src/entities/statuses/context.ts). Limits are Mastodon's: signed in, 4,096
// of each (its CONTEXT_LIMIT, "quasi-unlimited"); signed out, 40 ancestors and 60 descendants at most 20 replies deep
// (its ANCESTORS_LIMIT, DESCENDANTS_LIMIT, DESCENDANTS_DEPTH_LIMIT), which bounds what anyone may make a thread cost.
// Loops in reply chains terminate: ancestors by the depth cap, descendants by refusing an id already on the path.
// CROSS JOIN keeps the thread's rows as the outer loop (an index seek per reply), never a scan of statuses.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { statuses } from "../../db/schema/index";
import { notFound } from "../../lib/http/errors";
import { padId, unpadId } from "../../lib/text/ids";
import { hiddenAuthorFor, statusReadableBy } from "../../policy/visibility";

/** Signed in: ancestors and descendants each (Mastodon's CONTEXT_LIMIT). */
const CONTEXT_LIMIT = 4096;
/** Signed out (Mastodon's ANCESTORS_LIMIT, DESCENDANTS_LIMIT, DESCENDANTS_DEPTH_LIMIT). */
const ANON_ANCESTORS = 40;
const ANON_DESCENDANTS = 60;
const ANON_DEPTH = 20;
/** How deep a signed-in reader's descendants go (Mastodon has no bound; this one only stops a pathological chain). */
const MAX_DEPTH = 1000;

/** The ids of a status's ancestors (oldest first) and descendants (depth first) that `viewerId` may see; 404 without the status. */
export async function statusContextIds(db: DB, id: string, viewerId: string | null): Promise<{ ancestors: string[]; descendants: string[] }> {
  const p = padId(id);
  const ancestorsLimit = viewerId ? CONTEXT_LIMIT : ANON_ANCESTORS;
  const descendantsLimit = viewerId ? CONTEXT_LIMIT : ANON_DESCENDANTS;
  const depthLimit = viewerId ? MAX_DEPTH : ANON_DEPTH;
  // Descendants are taken from the recursive query's queue in path order (ORDER BY 2; ids are fixed-width): depth
  // first, so the limit keeps the first replies of the thread as it reads, as Mastodon's ORDER BY path LIMIT does.
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
          WHERE s.in_reply_to_id IS NOT NULL AND anc.depth < ${ancestorsLimit}
      )
      SELECT statuses.id AS id FROM anc CROSS JOIN statuses ON statuses.id = anc.id
      WHERE statuses.id <> ${p} AND ${visible} ORDER BY anc.depth DESC`),
    db.all<{ id: string }>(sql`WITH RECURSIVE d(id, path, depth) AS (
        SELECT id, id, 1 FROM statuses WHERE in_reply_to_id = ${p} AND id <> ${p}
        UNION ALL
        SELECT s.id, d.path || '/' || s.id, d.depth + 1 FROM d CROSS JOIN statuses s ON s.in_reply_to_id = d.id
          WHERE s.id <> ${p} AND instr(d.path, s.id) = 0 AND d.depth < ${depthLimit}
        ORDER BY 2
        LIMIT ${descendantsLimit}
      )
      SELECT statuses.id AS id FROM d CROSS JOIN statuses ON statuses.id = d.id WHERE ${visible} ORDER BY d.path`),
  ]);
  if (!root.length) throw notFound();
  const ancIds = [...new Set(anc.map((r) => unpadId(String(r.id))))];
  const ancSet = new Set(ancIds);
  const descIds = [...new Set(desc.map((r) => unpadId(String(r.id))))].filter((x) => !ancSet.has(x));
  return { ancestors: ancIds, descendants: descIds };
}
