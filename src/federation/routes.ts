// ActivityPub endpoints, and content negotiation on the URLs people also open in a browser: /users/:name and
// /@:name answer an actor document to `Accept: application/activity+json` and fall through to the HTML pages
// otherwise. Inboxes verify, store and enqueue, then answer 202 (processing is off the request path).
import { Hono, type Context, type Next } from "hono";
import type { AppEnv } from "../context";
import { loadStatusBundle } from "../entities/status";
import { accountUri, statusUri } from "../entities/urls";
import { errorResponse } from "../lib/errors";
import { parseId } from "../lib/ids";
import { createActivity } from "./activities";
import { ensureActorKeys } from "./actor-keys";
import { renderActor } from "./actor-doc";
import {
  featuredTagNames,
  followCollectionPage,
  localAccountByUsername,
  localStatus,
  pinnedStatusIds,
  publicStatusIds,
} from "./collections";
import { AP_CONTENT_TYPE, AS, wantsActivityJson } from "./context";
import { enforceRateLimit } from "../lib/rate-limit";
import { AcceptWithoutProcessing, INBOX_HOST_LIMIT, verifyInboxRequest } from "./inbox-verify";
import { instanceActorAccount } from "./instance-actor";
import { storeInboxItem } from "./inbox-process";
import { renderNote, withContext } from "./note-doc";
import { isTombstoned } from "./remote-statuses";

const r = new Hono<AppEnv>();

const ap = (c: Context<AppEnv>, body: unknown, status = 200) =>
  c.body(JSON.stringify(body), status as 200, { "content-type": AP_CONTENT_TYPE, vary: "Accept", "cache-control": "max-age=60" });

const apNotFound = (c: Context<AppEnv>) => c.json({ error: "Record not found" }, 404);

async function actorResponse(c: Context<AppEnv>, username: string) {
  const db = c.get("db");
  const account = await localAccountByUsername(db, username);
  if (!account || account.username === "instance.actor") return apNotFound(c);
  // A suspended account's actor is still served, marked `suspended: true` with its profile blanked (Mastodon does the
  // same while the suspension is reversible), so other servers keep its key and can undo the suspension later.
  const keys = await ensureActorKeys(db, account.id);
  return ap(c, renderActor(c.get("config"), account, keys.publicKeyPem));
}

r.get("/actor", async (c) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const actor = await instanceActorAccount(db, cfg);
  const keys = await ensureActorKeys(db, actor.id);
  const doc = renderActor(cfg, actor, keys.publicKeyPem);
  return ap(c, { ...doc, type: "Application", preferredUsername: cfg.domain, manuallyApprovesFollowers: true });
});

r.get("/users/:username", async (c) => {
  const username = c.req.param("username");
  if (wantsActivityJson(c.req.header("accept"))) return actorResponse(c, username);
  return c.redirect(`/@${username}`, 302);
});

r.get("/@:username", async (c: Context<AppEnv>, next: Next) => {
  if (!wantsActivityJson(c.req.header("accept"))) return next();
  return actorResponse(c, c.req.param("username")!);
});

async function noteResponse(c: Context<AppEnv>, username: string, rawId: string, activity: boolean) {
  const db = c.get("db");
  const cfg = c.get("config");
  const id = parseId(rawId);
  const account = await localAccountByUsername(db, username);
  if (!id || !account) return apNotFound(c);
  const status = await localStatus(db, account.id, id);
  if (!status) {
    const uri = statusUri(cfg, account.username, id);
    if (await isTombstoned(db, uri)) return ap(c, { "@context": AS, id: uri, type: "Tombstone" }, 410);
    return apNotFound(c);
  }
  if (status.reblogOfId || (status.visibility !== "public" && status.visibility !== "unlisted")) return apNotFound(c);
  const bundle = await loadStatusBundle(db, [id], null);
  const note = renderNote(cfg, bundle, id);
  if (!note) return apNotFound(c);
  return ap(c, activity ? createActivity(note) : withContext(note));
}

r.get("/users/:username/statuses/:id", async (c) => {
  if (!wantsActivityJson(c.req.header("accept"))) return c.redirect(`/@${c.req.param("username")}/${c.req.param("id")}`, 302);
  return noteResponse(c, c.req.param("username"), c.req.param("id"), false);
});

r.get("/users/:username/statuses/:id/activity", (c) => noteResponse(c, c.req.param("username"), c.req.param("id"), true));

r.get("/@:username/:id", async (c: Context<AppEnv>, next: Next) => {
  if (!wantsActivityJson(c.req.header("accept"))) return next();
  return noteResponse(c, c.req.param("username")!, c.req.param("id")!, false);
});

r.get("/users/:username/outbox", async (c) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const account = await localAccountByUsername(db, c.req.param("username"));
  if (!account) return apNotFound(c);
  const base = `${accountUri(cfg, account.username)}/outbox`;
  if (c.req.query("page") !== "true") {
    return ap(c, { "@context": AS, id: base, type: "OrderedCollection", totalItems: account.statusesCount, first: `${base}?page=true`, last: `${base}?min_id=0&page=true` });
  }
  const maxId = parseId(c.req.query("max_id"));
  const ids = await publicStatusIds(db, account.id, maxId, 20);
  const bundle = await loadStatusBundle(db, ids, null);
  const items = ids.map((id) => renderNote(cfg, bundle, id)).filter((n): n is Record<string, unknown> => !!n).map(createActivity).map((a) => ({ ...a, "@context": undefined }));
  const page: Record<string, unknown> = { "@context": AS, id: `${base}?page=true${maxId ? `&max_id=${maxId}` : ""}`, type: "OrderedCollectionPage", partOf: base, orderedItems: items };
  if (ids.length === 20) page.next = `${base}?max_id=${ids[ids.length - 1]}&page=true`;
  return ap(c, page);
});

for (const which of ["followers", "following"] as const) {
  r.get(`/users/:username/${which}`, async (c) => {
    const db = c.get("db");
    const account = await localAccountByUsername(db, c.req.param("username"));
    if (!account) return apNotFound(c);
    const base = `${account.uri}/${which}`;
    const total = which === "followers" ? account.followersCount : account.followingCount;
    const pageNo = Number(c.req.query("page") ?? "0");
    if (!pageNo || account.hideCollections) {
      const doc: Record<string, unknown> = { "@context": AS, id: base, type: "OrderedCollection", totalItems: total };
      if (!account.hideCollections) doc.first = `${base}?page=1`;
      return ap(c, doc);
    }
    const items = await followCollectionPage(db, account.id, which, pageNo);
    const doc: Record<string, unknown> = { "@context": AS, id: `${base}?page=${pageNo}`, type: "OrderedCollectionPage", totalItems: total, partOf: base, orderedItems: items };
    if (items.length === 40) doc.next = `${base}?page=${pageNo + 1}`;
    return ap(c, doc);
  });
}

r.get("/users/:username/collections/featured", async (c) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const account = await localAccountByUsername(db, c.req.param("username"));
  if (!account) return apNotFound(c);
  const ids = await pinnedStatusIds(db, account.id);
  const bundle = await loadStatusBundle(db, ids, null);
  const items = ids.map((id) => renderNote(cfg, bundle, id)).filter(Boolean);
  return ap(c, { "@context": AS, id: `${account.uri}/collections/featured`, type: "OrderedCollection", totalItems: items.length, orderedItems: items });
});

r.get("/users/:username/collections/tags", async (c) => {
  const db = c.get("db");
  const cfg = c.get("config");
  const account = await localAccountByUsername(db, c.req.param("username"));
  if (!account) return apNotFound(c);
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
    if (v.signer.domain) await enforceRateLimit(c, { name: "inbox_host", key: v.signer.domain, ...INBOX_HOST_LIMIT });
    const id = await storeInboxItem(db, v.signer.id, v.body);
    c.get("fx").add({ type: "inbox", itemId: id, origin: c.get("config").origin });
    return c.body(null, 202);
  } catch (e) {
    if (e instanceof AcceptWithoutProcessing) return c.body(null, 202);
    return errorResponse(e);
  }
}

r.post("/inbox", inbox);
r.post("/users/:username/inbox", async (c) => {
  const account = await localAccountByUsername(c.get("db"), c.req.param("username"));
  if (!account) return apNotFound(c);
  return inbox(c);
});

export default r;
