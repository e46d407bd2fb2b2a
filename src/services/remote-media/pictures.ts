// Remote accounts' avatars and headers, cached in R2 and served from this server's domain (issue 32 point 3), as
// Mastodon and GoToSocial keep them: readers' addresses stay here, and a picture outlives its server.
//
// When: an account stored, or whose avatar or header URL changed, is due (`pictures_cached_at` NULL: the upsert clears
// it and the old copy's key with it, src/federation/remote/remote-accounts.ts). The five-minute cron takes a bounded
// batch of due accounts, marks them and records one `cache_pictures` effect (`queueDuePictures`); the runner fetches
// each picture through the guarded fetch, checks it as an uploaded avatar and stores it as it came
// (`cacheRemotePictures`, media/remote.ts storeRemotePicture: no Images transformation). Until then, or when it cannot
// be fetched, the API answers the remote URL, as before. An account whose domain rejects media is never fetched.
//
// Pruning (`pruneRemotePictures`): the copies of accounts no local account follows, cached more than
// MEDIA_CACHE_RETENTION_DAYS ago, are deleted; the account then answers its remote URL again, and a Tern URL a client
// kept is redirected there by the media route, which queues the fetch again (src/queries/statuses/media-access.ts).
// Followed accounts keep theirs.
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { RemoteMediaFailed, storeRemotePicture } from "../../media/remote";
import { deleteOtherCopies, deleteStored, randomKeyPart } from "../../media/store";
import type { SafeFetchOptions } from "../../net/safe-fetch";
import { rejectMediaNow } from "../admin/blocks/domain-blocks";
import { deletePruned, retentionDays } from "./prune";

/** Accounts whose pictures one cron run queues (one effect; each account is two fetches at most). */
export const PICTURES_PER_RUN = 20;
/** Accounts one prune run looks at. */
export const PICTURES_PRUNE_PER_RUN = 100;

const KINDS = ["avatar", "header"] as const;
type Kind = (typeof KINDS)[number];

/** A cached picture's key: under the account's id, which the media route reads back (media-access.ts). */
export const remotePictureKey = (accountId: string, kind: Kind) => (ext: string) => `remote_accounts/${accountId}/${randomKeyPart()}/${kind}.${ext}`;

/** The five-minute cron: marks a batch of due accounts and records their fetch. Returns how many. */
export async function queueDuePictures(db: DB, fx: Effects, at: number, limit = PICTURES_PER_RUN): Promise<number> {
  const due = await db.all<{ id: string }>(
    sql`UPDATE accounts SET pictures_cached_at = ${at} WHERE id IN (SELECT id FROM accounts INDEXED BY accounts_pictures_due
        WHERE domain IS NOT NULL AND pictures_cached_at IS NULL AND (avatar_remote_url IS NOT NULL OR header_remote_url IS NOT NULL) LIMIT ${limit})
      RETURNING id`,
  );
  const ids = due.map((r) => String(r.id).replace(/^0+(?=\d)/, ""));
  if (ids.length) fx.add({ type: "cache_pictures", accountIds: ids });
  return ids.length;
}

/** A view of a pruned picture's old URL here (the media route): fetch the account's pictures again. */
export function recacheRemotePictures(fx: Effects, accountId: string): void {
  fx.add({ type: "cache_pictures", accountIds: [accountId] });
}

/**
 * The `cache_pictures` effect: fetches the pictures of `accountIds` not cached yet. Throws (after trying each) when one
 * failed in a way that may pass, so the runner retries the effect (bounded: src/effects/retry.ts; what was cached
 * meanwhile is skipped then); one that will not (404, not a picture, too large) leaves the remote URL.
 */
export async function cacheRemotePictures(db: DB, env: Pick<Env, "MEDIA">, fetchOpts: SafeFetchOptions, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  const rows = await db
    .select({
      id: accounts.id,
      avatar: accounts.avatarRemoteUrl,
      avatarKey: accounts.avatarKey,
      header: accounts.headerRemoteUrl,
      headerKey: accounts.headerKey,
      rejected: sql<number>`(${accounts.rejectMedia} OR ${rejectMediaNow()})`,
    })
    .from(accounts)
    // A negative mark: its pictures failed for good (below), and a retry of the batch for another's sake skips it.
    .where(
      and(
        inArray(accounts.id, accountIds.slice(0, PICTURES_PER_RUN)),
        sql`${accounts.domain} IS NOT NULL AND coalesce(${accounts.picturesCachedAt}, 0) >= 0`,
        isNull(accounts.suspendedAt),
      ),
    )
    .all();
  let retry: RemoteMediaFailed | null = null;
  for (const row of rows) {
    if (row.rejected) continue;
    let failed: "transient" | "for good" | null = null;
    for (const kind of KINDS) {
      const url = kind === "avatar" ? row.avatar : row.header;
      if (!url || (kind === "avatar" ? row.avatarKey : row.headerKey)) continue;
      try {
        await cacheOne(db, env, fetchOpts, row.id, kind, url);
      } catch (e) {
        if (!(e instanceof RemoteMediaFailed)) throw e;
        console.warn(`remote ${kind} of ${row.id}: ${e.message}${e.transient ? " (will retry)" : ""}`);
        if (e.transient) retry = e;
        failed = e.transient || failed === "transient" ? "transient" : "for good";
      }
    }
    if (failed === "for good") await db.update(accounts).set({ picturesCachedAt: -Date.now() }).where(eq(accounts.id, row.id));
  }
  if (retry) throw retry;
}

async function cacheOne(db: DB, env: Pick<Env, "MEDIA">, fetchOpts: SafeFetchOptions, id: string, kind: Kind, url: string): Promise<void> {
  const key = await storeRemotePicture(env, url, remotePictureKey(id, kind), fetchOpts);
  const column = kind === "avatar" ? { key: accounts.avatarKey, url: accounts.avatarRemoteUrl } : { key: accounts.headerKey, url: accounts.headerRemoteUrl };
  let updated: { id: string }[] = [];
  try {
    // Only while the account still names this URL and no copy: an update or another run meanwhile keeps its own.
    updated = await db
      .update(accounts)
      .set(kind === "avatar" ? { avatarKey: key, picturesCachedAt: Date.now() } : { headerKey: key, picturesCachedAt: Date.now() })
      .where(and(eq(accounts.id, id), eq(column.url, url), isNull(column.key)))
      .returning({ id: accounts.id });
  } finally {
    if (!updated.length) await deleteStored(env, [key]);
  }
  // The copy of the URL this one replaced (the upsert dropped its key, not its object).
  await deleteOtherCopies(env, `remote_accounts/${id}/`, key, (k) => k.includes(`/${kind}.`));
}

/** One bounded prune round; returns how many accounts lost their copies. */
export async function pruneRemotePictures(
  db: DB,
  env: Pick<Env, "MEDIA" | "MEDIA_CACHE_RETENTION_DAYS">,
  fx: Effects,
  at: number,
  limit = PICTURES_PRUNE_PER_RUN,
): Promise<number> {
  const days = retentionDays(env);
  if (days <= 0) return 0;
  const cutoff = at - days * 86_400_000;
  const rows = await db.all<{ id: string; avatar_key: string | null; header_key: string | null }>(
    sql`SELECT a.id, a.avatar_key, a.header_key FROM accounts a INDEXED BY accounts_pictures_cached
      WHERE a.domain IS NOT NULL AND (a.avatar_key IS NOT NULL OR a.header_key IS NOT NULL) AND abs(a.pictures_cached_at) < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM follows f JOIN accounts l ON l.id = f.account_id WHERE f.target_account_id = a.id AND l.domain IS NULL)
      ORDER BY a.pictures_cached_at LIMIT ${limit}`,
  );
  if (!rows.length) return 0;
  // Each account only while it still names the copies read (a re-cache meanwhile keeps its new ones). A pruned account
  // is not due again (pictures_cached_at is set): it comes back on a view of its old URL, or when its actor changes.
  const triples = JSON.stringify(rows.map((r) => [r.id, r.avatar_key ?? "", r.header_key ?? ""]));
  const done = await db.all<{ id: string }>(
    sql`UPDATE accounts SET avatar_key = NULL, header_key = NULL, pictures_cached_at = ${at}
      WHERE (id, coalesce(avatar_key, ''), coalesce(header_key, '')) IN
        (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(${triples}))
      RETURNING id`,
  );
  const pruned = new Set(done.map((d) => d.id));
  const keys = rows
    .filter((r) => pruned.has(r.id))
    .flatMap((r) => [r.avatar_key, r.header_key])
    .filter((k): k is string => !!k);
  await deletePruned(env, fx, keys, "remote pictures");
  return pruned.size;
}
