// Cron housekeeping: rows that only matter for a while. Bounded deletes, indexed by time where the table is large.
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import type { Effects } from "../effects/collector";
import type { Env } from "../env";
import { deleteStored } from "../media/store";
import { purgeSeenSql } from "../federation/inbox/inbox-seen";

const DAY = 24 * 60 * 60 * 1000;
/** Deliveries retry for about two days; the stored activity must outlive the last retry. */
export const OUTBOX_KEEP_MS = 4 * DAY;
/** A verified inbound activity whose processing kept failing (the queue gave up on it). */
export const INBOX_ITEM_KEEP_MS = 4 * DAY;
/** Idempotency-Key rows: Mastodon keeps a key for an hour. */
export const IDEMPOTENCY_KEEP_MS = 60 * 60 * 1000;

export async function pruneFederationState(db: DB, at: number): Promise<void> {
  await db.batch([
    db.run(purgeSeenSql(at)),
    db.run(sql`DELETE FROM activity_outbox WHERE created_at < ${at - OUTBOX_KEEP_MS}`),
    db.run(sql`DELETE FROM inbox_items WHERE received_at < ${at - INBOX_ITEM_KEEP_MS}`),
    db.run(sql`DELETE FROM idempotency_keys WHERE created_at < ${at - IDEMPOTENCY_KEEP_MS}`),
  ]);
}

/** Mastodon's MediaCleanupScheduler: unattached media older than a day goes. Also the redraft window after a delete. */
export const UNATTACHED_MEDIA_KEEP_MS = DAY;
/** Rows per cron run: one read, one delete and a few R2 calls (an attachment has at most two objects). */
export const MEDIA_CLEANUP_PER_RUN = 200;

/**
 * Deletes media no status or scheduled status holds once a day has passed since its upload (never attached) or since
 * its status was deleted (`detached_at`, kept for a redraft). The rows go first, in one statement that re-checks that
 * nothing took them meanwhile (a late redraft or scheduled post keeps its media whole); their objects right after.
 * Should R2 fail, the keys leave as a `delete_media` effect and the queue retries them; a row already gone is no
 * longer served either way (src/api/media/serve.ts). Returns the rows removed.
 */
export async function cleanupUnattachedMedia(db: DB, env: Pick<Env, "MEDIA">, fx: Effects, at: number, limit = MEDIA_CLEANUP_PER_RUN): Promise<number> {
  const cutoff = at - UNATTACHED_MEDIA_KEEP_MS;
  // The page is a range scan over media_unattached (migrations/0009; named, as the planner otherwise picks media_status
  // for `status_id IS NULL`); the delete finds each row by id ("+" keeps the re-check off other indexes).
  const gone = await db.all<{ file_key: string | null; preview_key: string | null }>(
    sql`DELETE FROM media_attachments WHERE id IN (SELECT id FROM media_attachments INDEXED BY media_unattached
        WHERE status_id IS NULL AND scheduled_status_id IS NULL AND coalesce(detached_at, created_at) < ${cutoff}
        ORDER BY coalesce(detached_at, created_at) LIMIT ${limit})
      AND +status_id IS NULL AND +scheduled_status_id IS NULL AND coalesce(detached_at, created_at) < ${cutoff}
      RETURNING file_key, preview_key`,
  );
  const keys = gone.flatMap((r) => [r.file_key, r.preview_key]).filter((k): k is string => !!k);
  try {
    await deleteStored(env, keys);
  } catch (e) {
    console.error("media cleanup: R2 delete failed, retrying through the queue", e instanceof Error ? e.message : e);
    fx.add({ type: "delete_media", keys });
  }
  return gone.length;
}
