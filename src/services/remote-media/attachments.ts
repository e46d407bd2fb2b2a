// The `cache_media` effect: a remote status was stored with attachments that name another server's files. Each is
// fetched through the guarded fetch into R2 (media/remote.ts: the upload pipeline's checks, preview, sizes and
// blurhash) and the row then points at Tern's copy (file_key, preview_key), keeping remote_url as the original. Until
// then, or when it cannot be fetched, the API answers the remote URL as before. An author whose domain is blocked with
// reject_media (now, or by the account's mark) is never fetched. A failure that may pass (unreachable, slow, 5xx,
// the Images binding) is thrown once the other attachments were tried, so the runner retries the effect (bounded:
// src/effects/retry.ts; cached rows are skipped on the next run); one that will not (404, wrong type, over the cap)
// leaves the row as it is. Nothing is half-stored: what a run wrote is removed when the row was cached or deleted
// meanwhile, or when the fetch failed after a write.
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { AheadRead, DB } from "../../db/client";
import { accounts, mediaAttachments } from "../../db/schema";
import { carriedKind, type Effects } from "../../effects/collector";
import type { Effect } from "../../effects/types";
import type { Env } from "../../env";
import { storedFileColumns } from "../../media/ingest";
import { ingestRemote, RemoteMediaFailed } from "../../media/remote";
import { attachmentKeys, deleteStored } from "../../media/store";
import type { SafeFetchOptions } from "../../net/safe-fetch";
import { rejectMediaNow } from "../admin/blocks/domain-blocks";

export type CacheEnv = Pick<Env, "MEDIA" | "IMAGES" | "IMAGES_TIMEOUT_MS" | "REMOTE_MEDIA_PREVIEWS">;

/** A view of a pruned remote attachment's old URL here (the media route): fetch it again, in the background. */
export function recacheRemoteAttachment(fx: Effects, mediaId: string): void {
  fx.add(cacheMediaEffect([mediaId]));
}

/** The attachments of `mediaIds` still to cache, with what deciding and fetching each needs. */
const cacheRowsQuery = (db: DB, mediaIds: string[]) =>
  db
    .select({
      id: mediaAttachments.id,
      remoteUrl: mediaAttachments.remoteUrl,
      contentType: mediaAttachments.contentType,
      blurhash: mediaAttachments.blurhash,
      rejected: sql<number>`(${accounts.rejectMedia} OR ${rejectMediaNow()})`,
    })
    .from(mediaAttachments)
    .innerJoin(accounts, eq(accounts.id, mediaAttachments.accountId))
    .where(and(inArray(mediaAttachments.id, mediaIds.slice(0, 16)), isNull(mediaAttachments.fileKey), sql`${accounts.domain} IS NOT NULL`));

type CacheRow = Awaited<ReturnType<ReturnType<typeof cacheRowsQuery>["all"]>>[number];
export type CacheMediaEffect = Extract<Effect, { type: "cache_media" }>;

/** The rows of a cache_media effect, read at the end of the batch that stored them (AheadRead). */
const CACHE_ROWS = carriedKind<CacheRow[]>("cache_media rows");

/** Records nothing: the effect that caches `mediaIds` once the batch storing them committed (the caller adds it then). */
export const cacheMediaEffect = (mediaIds: string[]): CacheMediaEffect => ({ type: "cache_media", mediaIds });

/**
 * The effect's read, to end the write batch that stores its attachments when the effect runs in this invocation next
 * (src/federation/inbox/handlers/context.ts withFinish): the same statement its run would make, seeing the batch's rows.
 */
export function cacheMediaReadAhead(db: DB, fx: Effects, effect: CacheMediaEffect): AheadRead {
  return { stmts: [cacheRowsQuery(db, effect.mediaIds)], keep: ([rows]) => fx.carry(effect, CACHE_ROWS, (rows ?? []) as CacheRow[]) };
}

/** What the batch that stored the effect's attachments read for it (taken once), or null: its run reads them. */
export const takeCacheRows = (fx: Effects, effect: CacheMediaEffect): CacheRow[] | null => fx.take(effect, CACHE_ROWS) ?? null;

/**
 * Caches the attachments `mediaIds` not cached yet; throws (after trying each) when one failed in a way that may pass.
 * `ahead`: their rows, read at the end of the batch that stored them (cacheMediaReadAhead).
 */
export async function cacheRemoteAttachments(
  db: DB,
  env: CacheEnv,
  fetchOpts: SafeFetchOptions,
  mediaIds: string[],
  ahead: CacheRow[] | null = null,
): Promise<void> {
  if (!mediaIds.length) return;
  const rows = ahead ?? (await cacheRowsQuery(db, mediaIds).all());
  let retry: RemoteMediaFailed | null = null;
  for (const row of rows) {
    if (row.rejected || !row.remoteUrl) continue;
    try {
      await cacheOne(db, env, fetchOpts, row.id, row.remoteUrl, row.contentType, !row.blurhash);
    } catch (e) {
      if (!(e instanceof RemoteMediaFailed)) throw e;
      console.warn(`remote media ${row.id}: ${e.message}${e.transient ? " (will retry)" : ""}`);
      if (e.transient) retry = e;
    }
  }
  if (retry) throw retry;
}

async function cacheOne(
  db: DB,
  env: CacheEnv,
  fetchOpts: SafeFetchOptions,
  id: string,
  url: string,
  declared: string | null,
  needsBlurhash: boolean,
): Promise<void> {
  const stored = await ingestRemote(env, url, declared, attachmentKeys(id), fetchOpts, env.REMOTE_MEDIA_PREVIEWS === "true", needsBlurhash);
  let updated: { id: string }[] = [];
  try {
    updated = await db
      .update(mediaAttachments)
      .set({
        ...storedFileColumns(stored),
        blurhash: sql`coalesce(${mediaAttachments.blurhash}, ${stored.blurhash})`,
        type: sql`CASE WHEN ${mediaAttachments.type} = 'unknown' THEN ${stored.type} ELSE ${mediaAttachments.type} END`,
      })
      .where(and(eq(mediaAttachments.id, id), isNull(mediaAttachments.fileKey)))
      .returning({ id: mediaAttachments.id });
  } finally {
    // Cached by another run, or the row went meanwhile (or D1 failed): this run's files go.
    if (!updated.length) await deleteStored(env, [stored.fileKey, stored.previewKey]);
  }
}
