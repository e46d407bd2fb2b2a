// A remote account's pinned statuses, read from its featured collection (Mastodon's FetchFeaturedCollectionService).
// The REST API claims a stale account and enqueues JOBS "fetch_featured"; the job fetches the collection and resolves
// its first items here, and the runner makes status_pins match them through the pins' one writer
// (services/interactions/pins.ts replaceRemotePins: this library, which services read, writes no pins itself). Notes
// are trusted as remote-statuses.ts trusts them: at their own id, on their author's host; an item not attributed to the
// account is ignored.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts } from "../../db/schema/index";
import type { StatusRow } from "../../entities/statuses/status";
import { readConfig, type Env } from "../../env";
import { padId } from "../../lib/text/ids";
import type { AccountRow } from "../../db/schema/index";
import type { Effects } from "../../effects/collector";
import { signedFetchOptions } from "./fetch-options";
import { readCollectionItems } from "./paged-collection";
import { iri, normalizeNote, sameHost } from "./normalize";
import { isDomainSuspended, ResolveError } from "./remote-accounts";
import { ingestNote } from "./remote-statuses";
import { FETCH_BUDGET, isLocalUri, statusByUri, type Resolution } from "./resolution";
import { newResolution, resolveStatus } from "./resolve-status";
import { fetchActivityJson, FetchRefused } from "../../net/safe-fetch";
import { accountRows } from "../../db/table-rows";

/** A featured collection is fetched again only after this long (Mastodon refreshes remote accounts about as often). */
export const FEATURED_REFRESH_MS = 6 * 3600_000;
/** Items read from a featured collection: Mastodon's limit on pins. */
export const MAX_FEATURED_ITEMS = 5;

/** A remote account with pins or collections (FEP-7aa9's featuredCollections, read by the same job) to fetch. */
const wantsFeatured = (a: AccountRow) => !!a.domain && (!!a.featuredUrl || !!a.featuredCollectionsUrl) && !a.suspendedAt;

/**
 * Marks a remote account's featured collection as being fetched now, unless it was within FEATURED_REFRESH_MS;
 * true when this caller won the claim (so concurrent requests enqueue one job between them).
 */
export async function claimFeaturedFetch(db: DB, account: AccountRow, now = Date.now()): Promise<boolean> {
  if (!wantsFeatured(account)) return false;
  if (account.featuredFetchedAt != null && account.featuredFetchedAt > now - FEATURED_REFRESH_MS) return false;
  const res = await db.run(
    sql`UPDATE accounts SET featured_fetched_at = ${now} WHERE id = ${padId(account.id)}
      AND (featured_fetched_at IS NULL OR featured_fetched_at <= ${now - FEATURED_REFRESH_MS})`,
  );
  return ((res as D1Result).meta?.changes ?? 0) > 0;
}

/** Enqueues a refresh of `account`'s pins when they are stale; the caller answers from the pins known now. */
export async function refreshFeaturedIfStale(db: DB, fx: Effects, account: AccountRow): Promise<boolean> {
  if (!(await claimFeaturedFetch(db, account))) return false;
  fx.add({ type: "fetch_featured", accountId: account.id, origin: fx.origin });
  return true;
}

/**
 * One item → the account's status, or null. An embedded Note is taken as is: it came in a document served at its
 * own id on the account's host, and names the account as author; anything else is fetched from its id.
 */
async function itemStatus(r: Resolution, account: AccountRow, item: unknown): Promise<StatusRow | null> {
  const uri = iri(item);
  if (!uri || isLocalUri(r.cfg, uri) || !sameHost(uri, account.uri)) return null;
  let status: StatusRow | null;
  if (typeof item === "object" && item !== null) {
    const note = normalizeNote(item);
    // An embedded object naming another author is ignored without a fetch.
    if (note && note.attributedTo !== account.uri) return null;
    status = await statusByUri(r.db, uri);
    if (!status && note) status = await ingestNote(r, note, account);
    if (!status) status = await resolveStatus(r, uri);
  } else {
    status = await resolveStatus(r, uri);
  }
  return status && status.accountId === account.id && !status.reblogOfId ? status : null;
}

/**
 * JOBS "fetch_featured": fetches the account's featured collection and answers the ids of the account's statuses it
 * lists (first = most recently pinned), for its pins to become; null when they stay as they are. Refusals by the
 * remote side (bad documents, fetch errors) are logged and answer null; D1 and queue errors throw.
 */
export async function fetchFeaturedCollection(db: DB, env: Env, accountId: string, origin: string, fx: Effects): Promise<string[] | null> {
  const [account] = await accountRows(db, { where: eq(accounts.id, accountId), limit: 1 });
  const cfg = readConfig(env, origin);
  if (!account?.featuredUrl || !wantsFeatured(account) || (await isDomainSuspended(db, account.domain!, cfg))) return null;
  const url = account.featuredUrl;
  if (!sameHost(url, account.uri)) return null;
  const opts = await signedFetchOptions(db, cfg);
  const r = newResolution(db, cfg, fx);
  r.budget = FETCH_BUDGET + 2 * MAX_FEATURED_ITEMS;
  const ids: string[] = [];
  try {
    // The collection and up to two of its pages, each trusted only as src/federation/remote/paged-collection.ts says.
    const listed = await readCollectionItems(url, {
      owner: account.uri,
      label: "featured",
      maxFetches: 3,
      maxItems: MAX_FEATURED_ITEMS,
      fetch: async (u) => (await fetchActivityJson(u, opts)).json,
    });
    if (!listed) {
      console.info("featured: not a collection", url.slice(0, 200));
      return null;
    }
    for (const item of listed) {
      const s = await itemStatus(r, account, item);
      if (s && !ids.includes(s.id)) ids.push(s.id);
    }
  } catch (e) {
    if (e instanceof FetchRefused || e instanceof ResolveError) {
      console.info("featured: fetch refused", url.slice(0, 200), e.message);
      return null;
    }
    throw e;
  }
  return ids;
}
