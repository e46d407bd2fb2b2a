// Pruning cached remote media (issue 32 point 3; Mastodon's media_cache_retention_period, 7 days by default): a remote
// attachment fetched into R2 more than MEDIA_CACHE_RETENTION_DAYS ago whose status nobody here interacted with (no
// local favourite, boost, reply or bookmark) loses its copy: the row goes back to naming the remote file (its measured
// meta and blurhash stay), and the R2 objects are deleted. A pruned file comes back as it was before it was cached:
// the API answers its remote URL, and a Tern URL a client kept is redirected to it by the media route, which queues
// the fetch again (src/api/media/serve.ts). Bounded batches read through the media_remote_cached index (0051).
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { deleteStored } from "../../media/store";

export const DEFAULT_RETENTION_DAYS = 7;
export const PRUNE_PER_RUN = 100;

/** MEDIA_CACHE_RETENTION_DAYS, or 7; 0 (or less) keeps cached files for ever. */
export function retentionDays(env: Pick<Env, "MEDIA_CACHE_RETENTION_DAYS">): number {
  const n = Number(env.MEDIA_CACHE_RETENTION_DAYS);
  return env.MEDIA_CACHE_RETENTION_DAYS !== undefined && env.MEDIA_CACHE_RETENTION_DAYS !== "" && Number.isFinite(n) ? n : DEFAULT_RETENTION_DAYS;
}

/** One bounded round; returns how many attachments lost their copy. */
export async function pruneRemoteMedia(
  db: DB,
  env: Pick<Env, "MEDIA" | "MEDIA_CACHE_RETENTION_DAYS">,
  fx: Effects,
  at: number,
  limit = PRUNE_PER_RUN,
): Promise<number> {
  const days = retentionDays(env);
  if (days <= 0) return 0;
  const cutoff = at - days * 86_400_000;
  const rows = await db.all<{ id: string; file_key: string; preview_key: string | null }>(
    sql`SELECT m.id, m.file_key, m.preview_key FROM media_attachments m INDEXED BY media_remote_cached
      WHERE m.file_key IS NOT NULL AND m.remote_url IS NOT NULL AND m.created_at < ${cutoff}
        AND (m.status_id IS NULL OR NOT (
          EXISTS (SELECT 1 FROM favourites f JOIN accounts a ON a.id = f.account_id WHERE f.status_id = m.status_id AND a.domain IS NULL)
          OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.status_id = m.status_id)
          OR EXISTS (SELECT 1 FROM statuses r WHERE r.reblog_of_id = m.status_id AND r.local = 1)
          OR EXISTS (SELECT 1 FROM statuses r WHERE r.in_reply_to_id = m.status_id AND r.local = 1)))
      ORDER BY m.created_at LIMIT ${limit}`,
  );
  if (!rows.length) return 0;
  // Each row only if it still names the copy read above (a re-cache meanwhile keeps its new one).
  const pairs = JSON.stringify(rows.map((r) => [r.id, r.file_key]));
  const done = await db.all<{ id: string }>(
    sql`UPDATE media_attachments SET file_key = NULL, preview_key = NULL
      WHERE (id, file_key) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${pairs}))
      RETURNING id`,
  );
  const pruned = new Set(done.map((d) => d.id));
  const keys = rows
    .filter((r) => pruned.has(r.id))
    .flatMap((r) => [r.file_key, r.preview_key])
    .filter((k): k is string => !!k);
  await deletePruned(env, fx, keys, "remote media");
  return pruned.size;
}

/** Deletes the objects of pruned copies; a failed R2 delete leaves through the queue as `delete_media`. */
export async function deletePruned(env: Pick<Env, "MEDIA">, fx: Effects, keys: string[], what: string): Promise<void> {
  try {
    await deleteStored(env, keys);
  } catch (e) {
    console.error(`${what} prune: R2 delete failed, retrying through the queue`, e instanceof Error ? e.message : e);
    fx.add({ type: "delete_media", keys });
  }
}
