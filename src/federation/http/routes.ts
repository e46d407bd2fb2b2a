// ActivityPub endpoints, and content negotiation on the URLs people also open in a browser: /users/:name and
// /@:name answer an actor document to `Accept: application/activity+json` and fall through to the HTML pages
// otherwise. Inboxes verify, store and enqueue, then answer 202 (processing is off the request path).
import { routeGroup } from "../../route-group";
import type { Context, Next } from "hono";
import type { AppEnv } from "../../context";
import { loadStatusBundle } from "../../entities/statuses/status";
import { accountUri, collectionUri, featuredCollectionsUri, statusUri } from "../../entities/urls";
import { collectionDocParts, grantedFeature, ownCollectionDocParts } from "../../queries/accounts/collections";
import { featureAuthorizationDoc, featuredCollectionDoc, featuredCollectionObject, featuredItemObject } from "../outbound/collection-doc";
import { errorResponse } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { createActivity, quoteAuthorizationDoc } from "../outbound/activities";
import { grantedAuthorization } from "../../queries/statuses/quotes";
import { ensureActorKeys } from "../signing/actor-keys";
import { renderActor } from "../outbound/actor-doc";
import { movedToUri } from "../../services/accounts/account-migration";
import { featuredTagNames, followCollectionPage, localActor, localStatus, pinnedStatusIds, publicStatusIds } from "./collections";
import { AP_CONTENT_TYPE, AS, COLLECTION_CONTEXT, wantsActivityJson } from "../outbound/context";
import { enforceRateLimitCountedHere } from "../../http/rate-limit";
import { AcceptWithoutProcessing, INBOX_HOST_FREE, INBOX_HOST_LIMIT, verifyInboxRequest } from "../inbox/inbox-verify";
import { instanceActorAccount } from "../outbound/instance-actor";
import { storeVerifiedItem } from "../inbox/inbox-process";
import { renderNote, withContext } from "../outbound/note-doc";
import { isTombstoned } from "../remote/resolution";
import type { AccountRow } from "../../db/schema/index";

const r = routeGroup();

const ap = (c: Context<AppEnv>, body: unknown, status = 200) =>
  c.body(JSON.stringify(body), status as 200, { "content-type": AP_CONTENT_TYPE, vary: "Accept", "cache-control": "max-age=60" });

const apNotFound = (c: Context<AppEnv>) => c.json({ error: "Record not found" }, 404);

/**
 * Mastodon's AccountOwnedConcern for a staff suspension (reversible, data kept): everything the account owns answers
 * 403 (statuses, their activities, outbox, followers, following, featured collections), cacheable for 3 minutes.
 * Only the actor itself stays served, marked `suspended` and blanked (actorResponse), so other servers keep its key.
 */
const apSuspended = (c: Context<AppEnv>) => c.json({ error: "This action is not allowed" }, 403, { "cache-control": "public, max-age=180", vary: "Accept" });

/** A local account whose collections and statuses may be served, or the response that replaces them. */
async function ownerOrRefusal(c: Context<AppEnv>, username: string): Promise<{ account: AccountRow } | { refusal: Response }> {
  const account = await localActor(c.get("db"), username);
  if (!account) return { refusal: apNotFound(c) };
  if (account.suspendedAt) return { refusal: apSuspended(c) };
  return { account };
}

/** GET /users/:username + `path`: a document of a local account, answered only while ownerOrRefusal serves it. */
function ownerGet<P extends string>(path: P, answer: (c: Context<AppEnv, `/users/:username${P}`>, account: AccountRow) => Promise<Response>) {
  r.get(`/users/:username${path}`, async (c) => {
    const owner = await ownerOrRefusal(c, c.req.param("username") ?? "");
    if ("refusal" in owner) return owner.refusal;
    return answer(c, owner.account);
  });
}

async function actorResponse(c: Context<AppEnv>, username: string) {
  const db = c.get("db");
  const account = await localActor(db, username);
  if (!account || account.username === "instance.actor") return apNotFound(c);
  // A suspended account's actor is still served, marked `suspended: true` with its profile blanked (Mastodon does the
  // same while the suspension is reversible), so other servers keep its key and can undo the suspension later.
  const keys = await ensureActorKeys(db, account.id);
  return ap(c, renderActor(c.get("config"), account, keys.publicKeyPem, await movedToUri(db, account)));
}

r.get("/actor", async (c) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const actor = await instanceActorAccount(db, cfg);
  const keys = await ensureActorKeys(db, actor.id);
  const doc = renderActor(cfg, actor, keys.publicKeyPem);
  // No follow collections of its own (no `followers: null` for peers to trip over); an empty outbox and an empty
  // featured collection, which GoToSocial dereferences on every actor it loads ("empty url host" without one).
  for (const k of ["featuredTags", "following", "followers"]) if (doc[k] == null) delete doc[k];
  // No collections of accounts either (Mastodon's ActorSerializer#featured_collections is nil for it).
  delete doc.featuredCollections;
  const featured = `${cfg.origin}/actor/collections/featured`;
  return ap(c, { ...doc, type: "Application", preferredUsername: cfg.domain, manuallyApprovesFollowers: true, featured });
});

const emptyCollection = (id: string) => ({ "@context": AS, id, type: "OrderedCollection", totalItems: 0, orderedItems: [] });
r.get("/actor/outbox", (c) => ap(c, emptyCollection(`${c.get("config").origin}/actor/outbox`)));
r.get("/actor/collections/featured", (c) => ap(c, emptyCollection(`${c.get("config").origin}/actor/collections/featured`)));

r.get("/users/:username", async (c) => {
  const username = c.req.param("username");
  if (wantsActivityJson(c.req.header("accept"))) return actorResponse(c, username);
  return c.redirect(`/@${username}`, 302);
});

// Hono reads a parameter only at the start of a segment, so `/@name` is matched with a pattern (as web/routes.tsx does).
r.get("/:handle{@[^/]+}", async (c: Context<AppEnv>, next: Next) => {
  if (!wantsActivityJson(c.req.header("accept"))) return next();
  return actorResponse(c, c.req.param("handle")!.slice(1));
});

async function noteResponse(c: Context<AppEnv>, username: string, rawId: string, activity: boolean) {
  const db = c.get("db");
  const cfg = c.get("config");
  const id = parseId(rawId);
  if (!id) return apNotFound(c);
  const owner = await ownerOrRefusal(c, username);
  if ("refusal" in owner) {
    // A deleted status of an account that is gone too is still a Tombstone, never a bare 404 that invites a refetch.
    if (owner.refusal.status === 404 && (await isTombstoned(db, statusUri(cfg, username, id)))) return tombstone(c, statusUri(cfg, username, id));
    return owner.refusal;
  }
  const { account } = owner;
  const status = await localStatus(db, account.id, id);
  if (!status) {
    const uri = statusUri(cfg, account.username, id);
    if (await isTombstoned(db, uri)) return tombstone(c, uri);
    return apNotFound(c);
  }
  if (status.reblogOfId || (status.visibility !== "public" && status.visibility !== "unlisted")) return apNotFound(c);
  const bundle = await loadStatusBundle(db, [id], null);
  const note = renderNote(cfg, bundle, id);
  if (!note) return apNotFound(c);
  return ap(c, activity ? createActivity(note) : withContext(note));
}

const tombstone = (c: Context<AppEnv>, uri: string) => ap(c, { "@context": AS, id: uri, type: "Tombstone" }, 410);

r.get("/users/:username/statuses/:id", async (c) => {
  if (!wantsActivityJson(c.req.header("accept"))) return c.redirect(`/@${c.req.param("username")}/${c.req.param("id")}`, 302);
  return noteResponse(c, c.req.param("username"), c.req.param("id"), false);
});

r.get("/users/:username/statuses/:id/activity", (c) => noteResponse(c, c.req.param("username"), c.req.param("id"), true));

r.get("/:handle{@[^/]+}/:id", async (c: Context<AppEnv>, next: Next) => {
  if (!wantsActivityJson(c.req.header("accept"))) return next();
  return noteResponse(c, c.req.param("handle")!.slice(1), c.req.param("id")!, false);
});

// A QuoteAuthorization a local author granted (FEP-044f): what other servers fetch to verify a quote; gone once revoked.
ownerGet("/quote_authorizations/:id", async (c, account) => {
  const id = parseId(c.req.param("id"));
  const granted = id ? await grantedAuthorization(c.get("db"), account.id, id) : null;
  if (!granted) return apNotFound(c);
  const uri = `${account.uri}/quote_authorizations/${id}`;
  return ap(c, quoteAuthorizationDoc(uri, account.uri, granted.quotingUri, granted.quotedUri));
});

ownerGet("/outbox", async (c, account) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const base = `${accountUri(cfg, account.username)}/outbox`;
  if (c.req.query("page") !== "true") {
    return ap(c, {
      "@context": AS,
      id: base,
      type: "OrderedCollection",
      totalItems: account.statusesCount,
      first: `${base}?page=true`,
      last: `${base}?min_id=0&page=true`,
    });
  }
  const maxId = parseId(c.req.query("max_id"));
  const ids = await publicStatusIds(db, account.id, maxId, 20);
  const bundle = await loadStatusBundle(db, ids, null);
  const items = ids
    .map((id) => renderNote(cfg, bundle, id))
    .filter((n): n is Record<string, unknown> => !!n)
    .map(createActivity)
    .map((a) => ({ ...a, "@context": undefined }));
  const page: Record<string, unknown> = {
    "@context": AS,
    id: `${base}?page=true${maxId ? `&max_id=${maxId}` : ""}`,
    type: "OrderedCollectionPage",
    partOf: base,
    orderedItems: items,
  };
  if (ids.length === 20) page.next = `${base}?max_id=${ids[ids.length - 1]}&page=true`;
  return ap(c, page);
});

for (const which of ["followers", "following"] as const) {
  ownerGet(`/${which}`, async (c, account) => {
    const db = c.get("db");
    const base = `${account.uri}/${which}`;
    const total = which === "followers" ? account.followersCount : account.followingCount;
    const pageNo = Number(c.req.query("page") ?? "0");
    if (!pageNo || account.hideCollections) {
      const doc: Record<string, unknown> = { "@context": AS, id: base, type: "OrderedCollection", totalItems: total };
      if (!account.hideCollections) doc.first = `${base}?page=1`;
      return ap(c, doc);
    }
    const items = await followCollectionPage(db, account.id, which, pageNo);
    const doc: Record<string, unknown> = {
      "@context": AS,
      id: `${base}?page=${pageNo}`,
      type: "OrderedCollectionPage",
      totalItems: total,
      partOf: base,
      orderedItems: items,
    };
    if (items.length === 40) doc.next = `${base}?page=${pageNo + 1}`;
    return ap(c, doc);
  });
}

// Collections (FEP-7aa9): the account's collections, each collection, its items, and a local account's consents.
ownerGet("/featured_collections", async (c, account) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const items = (await ownCollectionDocParts(db, account.id)).map((p) => featuredCollectionObject(cfg, p));
  return ap(c, { "@context": COLLECTION_CONTEXT, id: featuredCollectionsUri(account.uri), type: "Collection", totalItems: items.length, items });
});

ownerGet("/feature_authorizations/:id", async (c, account) => {
  const id = parseId(c.req.param("id"));
  const granted = id ? await grantedFeature(c.get("db"), account.id, id) : null;
  if (!id || !granted) return apNotFound(c);
  return ap(c, featureAuthorizationDoc(account.uri, id, granted.collectionUri ?? collectionUri(c.get("config"), granted.collectionId)));
});

/** A local collection whose owner is served, or the answer that replaces it. */
async function localCollection(c: Context<AppEnv>) {
  const id = parseId(c.req.param("id"));
  const p = id ? await collectionDocParts(c.get("db"), id) : null;
  if (!p?.owner.local || p.collection.uri) return { refusal: apNotFound(c) };
  if (p.owner.suspended) return { refusal: apSuspended(c) };
  return { parts: p };
}

r.get("/collections/:id", async (c: Context<AppEnv>, next: Next) => {
  // A browser gets the collection's page (src/web/routes.tsx collectionPage).
  if (!wantsActivityJson(c.req.header("accept"))) return next();
  const found = await localCollection(c);
  return "refusal" in found ? found.refusal : ap(c, featuredCollectionDoc(c.get("config"), found.parts));
});

r.get("/collections/:id/items/:item", async (c) => {
  const found = await localCollection(c);
  if ("refusal" in found) return found.refusal;
  const item = found.parts.items.find((i) => i.id === parseId(c.req.param("item")));
  if (!item) return apNotFound(c);
  return ap(c, { "@context": COLLECTION_CONTEXT, ...featuredItemObject(c.get("config"), found.parts.collection.id, item) });
});

ownerGet("/collections/featured", async (c, account) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const ids = await pinnedStatusIds(db, account.id);
  const bundle = await loadStatusBundle(db, ids, null);
  const items = ids.map((id) => renderNote(cfg, bundle, id)).filter(Boolean);
  return ap(c, { "@context": AS, id: `${account.uri}/collections/featured`, type: "OrderedCollection", totalItems: items.length, orderedItems: items });
});

ownerGet("/collections/tags", async (c, account) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const names = await featuredTagNames(db, account.id);
  return ap(c, {
    "@context": AS,
    id: `${account.uri}/collections/tags`,
    type: "Collection",
    totalItems: names.length,
    items: names.map((n) => ({ type: "Hashtag", href: `${cfg.origin}/tags/${encodeURIComponent(n)}`, name: `#${n}` })),
  });
});

async function inbox(c: Context<AppEnv>) {
  const db = c.get("db");
  try {
    const v = await verifyInboxRequest(db, c.get("config"), c.req.raw);
    if (v.signer.domain) await enforceRateLimitCountedHere(c, { name: "inbox_host", key: v.signer.domain, ...INBOX_HOST_LIMIT }, INBOX_HOST_FREE);
    // Processed once the 202 is out, in this invocation (no queue message: Effects.afterResponse).
    await storeVerifiedItem(db, c.env, c.get("fx"), v);
    return c.body(null, 202);
  } catch (e) {
    if (e instanceof AcceptWithoutProcessing) return c.body(null, 202);
    return errorResponse(e);
  }
}

r.post("/inbox", inbox);
// The instance actor's own inbox: relays answer its Follow there.
r.post("/actor/inbox", inbox);
r.post("/users/:username/inbox", async (c) => {
  const account = await localActor(c.get("db"), c.req.param("username"));
  if (!account) return apNotFound(c);
  return inbox(c);
});

export default r;
