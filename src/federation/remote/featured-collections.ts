// Remote collections read and checked (FEP-7aa9 as Mastodon 4.6 sends them): a FeaturedCollection document normalised
// and capped, stored through src/services/relationships/remote-collections.ts, and the consent of each remote account
// it features proven before that item is shown (ActivityPub::VerifyFeaturedItemService): its FeatureAuthorization,
// on the featured account's host, fetched and found to name the collection and the account. Fetches are bounded by
// the activity's budget; what is left is proven later by the `collection_verify` job, which fetches the collection
// again. Local featured accounts are trusted only as they consented here.
import { sql } from "drizzle-orm";
import type { AccountRow } from "../../db/schema/index";
import { httpUrl } from "../../lib/http/urls";
import { padId, unpadId } from "../../lib/text/ids";
import { acceptProvenItem, type RemoteCollection, storeRemoteCollection, type UnprovenItem } from "../../services/relationships/remote-collections";
import { asArray, field, iri, sameHost } from "./normalize";
import { resolveActor, ResolveError } from "./remote-accounts";
import { isLocalUri, type Resolution } from "./resolution";
import { fetchObject } from "./resolve-status";
import { plainText, sanitizeHtmlWithin } from "./sanitize";
import { fetchActivityJson, FetchRefused } from "../../net/safe-fetch";
import { signedFetchOptions } from "./fetch-options";
import { readCollectionItems } from "./paged-collection";

/** Items read from a remote collection (ProcessFeaturedCollectionService::ITEMS_LIMIT). */
export const MAX_REMOTE_ITEMS = 150;
const NAME_MAX = 256;
const DESCRIPTION_MAX = 2_048;

const typeIs = (o: unknown, t: string) => {
  const v = field(o, "type");
  return v === t || (Array.isArray(v) && v.includes(t));
};
const str = (v: unknown, max: number) => (typeof v === "string" ? v.slice(0, max) : null);

/** A FeaturedCollection document of `ownerUri`, checked (at its owner's host, attributed to it) and capped; else null. */
export function normalizeFeaturedCollection(doc: unknown, ownerUri: string): RemoteCollection | null {
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || !typeIs(doc, "FeaturedCollection")) return null;
  const o = doc as Record<string, unknown>;
  const uri = httpUrl(iri(o.id));
  if (!uri || !sameHost(uri, ownerUri) || iri(o.attributedTo) !== ownerUri) return null;
  const map = o.summaryMap && typeof o.summaryMap === "object" && !Array.isArray(o.summaryMap) ? (o.summaryMap as Record<string, unknown>) : null;
  const [language, mapped] = map ? (Object.entries(map)[0] ?? [null, null]) : [null, null];
  const summary = str(mapped, 20_000) ?? str(o.summary, 20_000) ?? "";
  const items: RemoteCollection["items"] = [];
  const orderedItems = o.orderedItems ?? o.items;
  for (const item of asArray(orderedItems, MAX_REMOTE_ITEMS)) {
    if (!item || typeof item !== "object") continue; // an item given by id alone is not fetched (Mastodon embeds them)
    const id = httpUrl(iri((item as Record<string, unknown>).id));
    const featured = httpUrl(iri(field(item, "featuredObject")));
    if (!id || !featured || !sameHost(id, uri)) continue;
    items.push({ uri: id, featuredObject: featured, featureAuthorization: httpUrl(iri(field(item, "featureAuthorization"))) });
  }
  const published = typeof o.published === "string" ? Date.parse(o.published) : Number.NaN;
  const topic = field(o.topic, "name");
  return {
    uri,
    url: httpUrl(iri(o.url)),
    name: plainText(str(o.name, NAME_MAX * 4) ?? "").slice(0, NAME_MAX),
    description: sanitizeHtmlWithin(summary, DESCRIPTION_MAX),
    language: language && /^[a-z]{2,3}(-[A-Za-z]{2,4})?$/.test(language) ? language : null,
    sensitive: o.sensitive === true,
    discoverable: o.discoverable !== false,
    topic: typeof topic === "string" && topic.length <= 200 ? topic : null,
    published: Number.isFinite(published) ? published : null,
    items,
  };
}

/**
 * Stores the collection `doc` (embedded, or fetched when only its id is given) of `owner`, then proves what the
 * budget allows of its remote accounts' items; the rest is left to a `collection_verify` job. Answers the collection's
 * id, or null when it was not a collection of the owner.
 */
export async function ingestFeaturedCollection(r: Resolution, owner: AccountRow, doc: unknown, notify: boolean): Promise<string | null> {
  let json = doc;
  if (typeof doc === "string") {
    if (!sameHost(doc, owner.uri)) return null;
    json = await fetchObject(r, doc).catch(refusedAsNull);
  }
  const c = normalizeFeaturedCollection(json, owner.uri);
  if (!c) return null;
  const stored = await storeRemoteCollection(r.db, r.fx, owner.id, c, notify);
  if (!stored) return null;
  // What is left is tried once more, later, by one job (which leaves nothing for later itself).
  const left = await proveItems(r, stored.id, c.uri, stored.unproven);
  if (left) r.fx.add({ type: "collection_verify", collectionId: stored.id, origin: r.fx.origin });
  return stored.id;
}

/**
 * Proves each item while the budget lasts; answers whether some are left for later: not reached, or not proven because
 * their server failed for now (an error, a 5xx, no answer in time). An item whose authorization is missing or says
 * otherwise is not retried.
 */
async function proveItems(r: Resolution, collectionId: string, collectionUri: string, items: UnprovenItem[]): Promise<boolean> {
  let left = false;
  for (const [n, item] of items.entries()) {
    if (isLocalUri(r.cfg, item.featuredObject)) continue; // consent given here, applied when stored
    if (r.budget < 2) return left || items.slice(n).some((i) => !isLocalUri(r.cfg, i.featuredObject));
    if ((await proveItem(r, collectionId, collectionUri, item)) === "later") left = true;
  }
  return left;
}

const TRANSIENT = /^(status 5\d\d|timed out|network error)/;

/** ActivityPub::VerifyFeaturedItemService for one item: its authorization fetched and checked, its account known. */
async function proveItem(r: Resolution, collectionId: string, collectionUri: string, item: UnprovenItem): Promise<"proven" | "refused" | "later"> {
  const auth = item.featureAuthorization;
  if (!auth || !sameHost(auth, item.featuredObject)) return "refused";
  try {
    const doc = await fetchObject(r, auth);
    if (!doc || !typeIs(doc, "FeatureAuthorization")) return "refused";
    if (iri(doc.interactingObject) !== collectionUri || iri(doc.interactionTarget) !== item.featuredObject) return "refused";
    const [known] = await r.db.all<{ id: string; domain: string | null }>(sql`SELECT id, domain FROM accounts WHERE uri = ${item.featuredObject}`);
    let accountId = known?.domain ? unpadId(known.id) : null;
    if (!known) {
      r.budget--;
      accountId = (await resolveActor(r.db, r.cfg, item.featuredObject)).id;
    }
    if (!accountId) return "refused";
    await acceptProvenItem(r.db, collectionId, accountId, item);
    return "proven";
  } catch (e) {
    if (e instanceof FetchRefused || e instanceof ResolveError) {
      console.info("collections: consent not proven", auth.slice(0, 200), e.message);
      return TRANSIENT.test(e instanceof FetchRefused ? e.reason : e.message) ? "later" : "refused";
    }
    throw e;
  }
}

function refusedAsNull(e: unknown): null {
  if (e instanceof FetchRefused || e instanceof ResolveError) {
    console.info("collections: fetch refused", e.message);
    return null;
  }
  throw e;
}

/**
 * JOBS `collection_verify`: the remote collection fetched again, its unproven items proven with a fresh budget; what
 * still fails waits for the collection's next Add or Update, or its owner's next refresh (no job queues another).
 */
export async function verifyRemoteCollection(r: Resolution, collectionId: string): Promise<void> {
  const [row] = await r.db.all<{ uri: string | null; account_id: string }>(sql`SELECT uri, account_id FROM collections WHERE id = ${padId(collectionId)}`);
  if (!row?.uri) return;
  const [owner] = await r.db.all<{ uri: string; domain: string | null; suspended_at: number | null }>(
    sql`SELECT uri, domain, suspended_at FROM accounts WHERE id = ${row.account_id}`,
  );
  if (!owner?.domain || owner.suspended_at) return;
  r.budget = 30;
  const json = await fetchObject(r, row.uri).catch(refusedAsNull);
  const c = normalizeFeaturedCollection(json, owner.uri);
  if (!c) return;
  const proven = new Set(
    (
      await r.db.all<{ uri: string }>(
        sql`SELECT uri FROM collection_items WHERE collection_id = ${padId(collectionId)} AND state = 'accepted' AND uri IS NOT NULL`,
      )
    ).map((x) => x.uri),
  );
  await proveItems(
    r,
    collectionId,
    c.uri,
    c.items.filter((i) => !proven.has(i.uri)),
  );
}

/** Collections read from an account's featuredCollections (FetchFeaturedCollectionsCollectionService::MAX_ITEMS is 50). */
export const MAX_ACCOUNT_COLLECTIONS = 20;

/**
 * JOBS `fetch_featured`, its second half: the remote account's collections read from its `featuredCollections` (two
 * pages at most) and each stored, its items proven within a budget of 30 fetches (the rest by `collection_verify`).
 */
export async function fetchAccountCollections(r: Resolution, account: AccountRow): Promise<void> {
  const url = account.featuredCollectionsUrl;
  if (!url || !account.domain || account.suspendedAt || !sameHost(url, account.uri)) return;
  r.budget = 30;
  const listed = await readCollectionItems(url, {
    owner: account.uri,
    label: "featured collections",
    maxFetches: 3,
    maxItems: MAX_ACCOUNT_COLLECTIONS,
    fetch: async (u) => {
      r.budget--;
      return (await fetchActivityJson(u, await signedFetchOptions(r.db, r.cfg))).json;
    },
  }).catch(refusedAsNull);
  for (const item of listed ?? []) await ingestFeaturedCollection(r, account, item, false).catch(refusedAsNull);
}
