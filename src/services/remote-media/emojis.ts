// Remote custom emojis cached in R2 (issue 32 point 3), as remote avatars are (./pictures.ts): an emoji stored,
// or whose image URL changed, is due (`image_cached_at` NULL: the upsert clears it with the old copy's key,
// custom-emojis.ts); the five-minute cron takes a bounded batch and records one `cache_emojis` effect; the runner
// fetches each image through the guarded fetch (at most EMOJI_LIMIT, Mastodon's 256 KB), checks it as an uploaded
// avatar and stores it as it came. Statuses read their emojis from custom_emojis, so they show the copy at once; the
// profiles that keep a copy of their emojis (accounts.emojis) are brought in step by the same run. Until then, or
// when it cannot be fetched, the remote URL. Emojis are small and shared, so they are not pruned.
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { customEmojis } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { blockingDomains } from "../../lib/text/domain-name";
import { padId } from "../../lib/text/ids";
import { RemoteMediaFailed, storeRemotePicture } from "../../media/remote";
import { deleteOtherCopies, deleteStored, randomKeyPart } from "../../media/store";
import type { SafeFetchOptions } from "../../net/safe-fetch";
import { valueList } from "../../db/id-list";

/** Emojis one cron run queues (one effect). */
export const EMOJIS_PER_RUN = 50;
/** Mastodon's limit for a remote emoji's image. */
export const EMOJI_LIMIT = 256 * 1024;
/** Profiles of an emoji's domain brought in step per cached emoji (the rest on their next refresh). */
const PROFILES_PER_EMOJI = 200;

const emojiKey = (emojiId: string) => (ext: string) => `custom_emojis/${emojiId}/${randomKeyPart()}/image.${ext}`;

/** The five-minute cron: marks a batch of due emojis and records their fetch. Returns how many. */
export async function queueDueEmojis(db: DB, fx: Effects, at: number, limit = EMOJIS_PER_RUN): Promise<number> {
  const due = await db.all<{ id: string }>(
    sql`UPDATE custom_emojis SET image_cached_at = ${at} WHERE id IN (SELECT id FROM custom_emojis INDEXED BY custom_emojis_due
        WHERE domain IS NOT NULL AND image_cached_at IS NULL AND image_remote_url IS NOT NULL LIMIT ${limit})
      RETURNING id`,
  );
  const ids = due.map((r) => String(r.id).replace(/^0+(?=\d)/, ""));
  if (ids.length) fx.add({ type: "cache_emojis", emojiIds: ids });
  return ids.length;
}

/**
 * The `cache_emojis` effect: fetches the images of `emojiIds` not cached yet. Throws (after trying each) when one failed
 * in a way that may pass, so the runner retries the effect (bounded); one that will not leaves the remote URL.
 */
export async function cacheRemoteEmojis(db: DB, env: Pick<Env, "MEDIA">, fetchOpts: SafeFetchOptions, emojiIds: string[]): Promise<void> {
  if (!emojiIds.length) return;
  const rows = await db
    .select({ id: customEmojis.id, domain: customEmojis.domain, url: customEmojis.imageRemoteUrl })
    .from(customEmojis)
    // A negative mark: it failed for good (below), and a retry of the batch for another's sake skips it.
    .where(
      and(
        inArray(customEmojis.id, emojiIds.slice(0, EMOJIS_PER_RUN)),
        isNull(customEmojis.imageKey),
        sql`${customEmojis.domain} IS NOT NULL AND coalesce(${customEmojis.imageCachedAt}, 0) >= 0`,
      ),
    )
    .all();
  let retry: RemoteMediaFailed | null = null;
  for (const row of rows) {
    if (!row.url || !row.domain || (await rejectsMedia(db, row.domain))) continue;
    try {
      await cacheOne(db, env, fetchOpts, row.id, row.domain, row.url);
    } catch (e) {
      if (!(e instanceof RemoteMediaFailed)) throw e;
      console.warn(`remote emoji ${row.id}: ${e.message}${e.transient ? " (will retry)" : ""}`);
      if (e.transient) retry = e;
      else await db.update(customEmojis).set({ imageCachedAt: -Date.now() }).where(eq(customEmojis.id, row.id));
    }
  }
  if (retry) throw retry;
}

const rejectsMedia = async (db: DB, domain: string) =>
  (await db.all(sql`SELECT 1 FROM domain_blocks WHERE reject_media = 1 AND domain IN ${valueList(blockingDomains(domain))} LIMIT 1`)).length > 0;

async function cacheOne(db: DB, env: Pick<Env, "MEDIA">, fetchOpts: SafeFetchOptions, id: string, domain: string, url: string): Promise<void> {
  const key = await storeRemotePicture(env, url, emojiKey(id), fetchOpts, EMOJI_LIMIT);
  let updated: unknown[] = [];
  try {
    // Only while the emoji still names this URL and no copy; the profiles of its domain that show it, in the same batch.
    const [set] = await db.batch([
      db
        .update(customEmojis)
        .set({ imageKey: key, imageCachedAt: Date.now() })
        .where(and(eq(customEmojis.id, id), eq(customEmojis.imageRemoteUrl, url), isNull(customEmojis.imageKey)))
        .returning({ id: customEmojis.id }),
      db.run(sql`UPDATE accounts SET emojis = (SELECT json_group_array(CASE WHEN json_extract(j.value, '$.id') = ${padId(id)}
            THEN json_set(j.value, '$.image_key', (SELECT image_key FROM custom_emojis WHERE id = ${padId(id)})) ELSE json(j.value) END)
          FROM json_each(accounts.emojis) j)
        WHERE id IN (SELECT id FROM accounts WHERE domain = ${domain} AND instr(emojis, ${padId(id)}) > 0 LIMIT ${PROFILES_PER_EMOJI})`),
    ]);
    updated = set;
  } finally {
    if (!updated.length) await deleteStored(env, [key]);
  }
  await deleteOtherCopies(env, `custom_emojis/${id}/`, key);
}
