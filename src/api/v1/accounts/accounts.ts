// /api/v1/accounts (registration, POST /, is accounts-register.ts): own profile, account pages and lists,
// relationships and the per-account actions (follow, block, mute, note, endorse).
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv, Ctx } from "../../../context";
import type { RenderAccountRow } from "../../../db/schema/index";
import { renderAccount, renderCredentialAccount } from "../../../entities/accounts/account";
import { renderRelationships } from "../../../entities/accounts/relationship";
import { renderStatuses } from "../../../entities/statuses/status";
import { renderFamiliarFollowers } from "../../../entities/accounts/familiar-followers";
import { renderList } from "../../../entities/accounts/list";
import { renderProfileFeaturedTag } from "../../../entities/instance/tag";
import { gone, notFound, unauthorized, wrongScope } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { clampLimit, readPage, setLinkHeader, type Page } from "../../../lib/http/pagination";
import { parse, readParams, zArray, zBool, zInt, zStr, pathId } from "../../../lib/http/params";
import { rateLimited } from "../../../http/rate-limit";
import { CREDENTIALS_BODY_LIMIT, credentialsSchema, profileChangesOf } from "./credentials-params";
import { me, requireUser, viewerAccountId } from "../../../oauth/guard";
import { scopeAllows } from "../../../oauth/scopes";
import { MAX_NOTE_CHARS, setAccountNote } from "../../../services/relationships/account-notes";
import {
  accountStatusPage,
  accountsByIds,
  familiarFollowers,
  featuredTagsOf,
  followPage,
  getAccount,
  listsContaining,
  lookupAccount,
  type AccountPageRow,
} from "../../../queries/accounts/accounts";
import { block, unblock } from "../../../services/relationships/blocks";
import { endorse, endorsementsPage, unendorse } from "../../../services/relationships/endorsements";
import { follow, removeFromFollowers, unfollow } from "../../../services/relationships/follows";
import { mute, unmute } from "../../../services/relationships/mutes";
import { updateProfile } from "../../../services/accounts/profile";
import { refreshFeaturedIfStale } from "../../../federation/remote/featured-collection";
import { movedAccountOf } from "../../../services/accounts/account-migration";
import { viewerFeatureDecisions } from "../../../services/relationships/feature-approval";
import { searchAccounts } from "../../../queries/statuses/search";

const r = routeGroup();

/** Public routes: anyone may call; a token, if sent, must be valid and carry the scope (authorize_if_got_token!). */
const publicScope = (scope: string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.get("invalidToken")) throw unauthorized();
    const v = c.get("viewer");
    if (v && !scopeAllows(v.scopes, scope)) throw wrongScope();
    await next();
  });

/** `id[]` lists: capped (security A18), bad ids dropped, duplicates collapsed. */
export function idsParam(raw: unknown, max: number): string[] {
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.values(raw) : raw === undefined || raw === null ? [] : [raw];
  const out: string[] = [];
  for (const x of list) {
    const id = parseId(x);
    if (id && !out.includes(id)) out.push(id);
    if (out.length >= max) break;
  }
  return out;
}

/** Account lists keyed by an internal row id: accounts in the body, row ids in the Link header. */
export function accountPage(c: Ctx, rows: AccountPageRow[], page: Page) {
  const cfg = c.get("config");
  setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length === page.limit);
  return c.json(rows.map((x) => renderAccount(cfg, x.account)));
}

// ---- the own account ----

r.get("/verify_credentials", requireUser("read:accounts", "profile"), (c) => {
  const v = me(c);
  // Everything comes with the viewer (one query at authentication): no further round trip.
  return c.json(renderCredentialAccount(c.get("config"), v.account, v.user, v.role, v.followRequestsCount));
});

const updateCredentials = async (c: Ctx) => {
  const p = await parse(c, credentialsSchema(), CREDENTIALS_BODY_LIMIT);
  const v = me(c);
  const out = await updateProfile(c.get("db"), c.get("fx"), c.get("config"), c.env, v, profileChangesOf(p));
  return c.json(renderCredentialAccount(c.get("config"), out.account, out.user, v.role, out.followRequestsCount));
};
r.patch("/update_credentials", requireUser("write:accounts"), updateCredentials);
r.put("/update_credentials", requireUser("write:accounts"), updateCredentials);

// ---- collections addressed by query ----

r.get("/relationships", requireUser("read:follows"), async (c) => {
  const params = await readParams(c);
  const p = await parse(c, z.object({ with_suspended: zBool }).passthrough());
  const ids = idsParam(params.id, 40);
  return c.json(await renderRelationships(c.get("db"), me(c).account.id, ids, p.with_suspended ?? false));
});

const searchSchema = lazy(() =>
  z
    .object({
      q: z.preprocess((v) => (typeof v === "string" ? v.slice(0, 2000) : v), z.string().optional()),
      offset: zInt,
      following: zBool,
      resolve: zBool,
    })
    .passthrough(),
);

r.get("/search", requireUser("read:accounts"), async (c) => {
  const p = await parse(c, searchSchema());
  const q = await readParams(c);
  // The same search as /api/v2/search's accounts (src/queries/statuses/search.ts), as in Mastodon (AccountSearchService).
  const rows = await searchAccounts(c.get("db"), c.get("config"), p.q ?? "", {
    viewerId: me(c).account.id,
    limit: clampLimit(q.limit, 40, 80),
    offset: Math.min(Math.max(p.offset ?? 0, 0), 10_000),
    following: p.following ?? false,
    accountId: null,
  });
  const cfg = c.get("config");
  const decisions = await viewerFeatureDecisions(c.get("db"), me(c).account.id, rows);
  return c.json(rows.map((a) => renderAccount(cfg, a, null, null, decisions.get(a.id))));
});

/** One account for the viewer (by id or by handle), its `moved` and its feature decision read side by side. */
async function oneAccount(c: Ctx, a: RenderAccountRow) {
  const db = c.get("db");
  const [moved, decisions] = await Promise.all([movedAccountOf(db, a), viewerFeatureDecisions(db, viewerAccountId(c), [a])]);
  return c.json(renderAccount(c.get("config"), a, null, moved, decisions.get(a.id)));
}

r.get("/lookup", publicScope("read:accounts"), async (c) => {
  const p = await parse(c, z.object({ acct: zStr(600) }));
  const a = await lookupAccount(c.get("db"), c.get("config"), p.acct);
  if (!a) throw notFound();
  if (a.suspendedAt) throw gone();
  return oneAccount(c, a);
});

r.get("/familiar_followers", requireUser("read:follows"), async (c) => {
  const ids = idsParam((await readParams(c)).id, 40);
  const map = await familiarFollowers(c.get("db"), me(c).account.id, ids);
  return c.json(renderFamiliarFollowers(c.get("config"), ids, map));
});

r.get("/", publicScope("read:accounts"), async (c) => {
  const ids = idsParam((await readParams(c)).id, 40);
  const rows = (await accountsByIds(c.get("db"), ids)).filter((a) => !a.suspendedAt);
  const cfg = c.get("config");
  const decisions = await viewerFeatureDecisions(c.get("db"), viewerAccountId(c), rows);
  return c.json(rows.map((a) => renderAccount(cfg, a, null, null, decisions.get(a.id))));
});

// ---- one account ----

r.get("/:id", publicScope("read:accounts"), async (c) => {
  const a = await getAccount(c.get("db"), pathId(c));
  if (!a) throw notFound();
  if (a.suspendedAt) throw gone();
  return oneAccount(c, a);
});

const statusesSchema = lazy(() =>
  z.object({ pinned: zBool, only_media: zBool, exclude_replies: zBool, exclude_reblogs: zBool, tagged: zStr(200).optional() }).passthrough(),
);

r.get("/:id/statuses", publicScope("read:statuses"), async (c) => {
  const id = pathId(c);
  const p = await parse(c, statusesSchema());
  const page = readPage(await readParams(c), 20, 40);
  const db = c.get("db");
  const a = await getAccount(db, id);
  if (!a) throw notFound();
  if (a.suspendedAt) return c.json([]);
  // A remote account's pins come from its featured collection, refreshed off the request path; answer with what is known.
  if (p.pinned && a.domain) await refreshFeaturedIfStale(db, c.get("fx"), a);
  const viewer = viewerAccountId(c);
  const { ids, related } = await accountStatusPage(
    db,
    id,
    viewer,
    { pinned: p.pinned, onlyMedia: p.only_media, excludeReplies: p.exclude_replies, excludeReblogs: p.exclude_reblogs, tagged: p.tagged },
    page,
  );
  setLinkHeader(c, ids[0], ids[ids.length - 1], ids.length === page.limit);
  return c.json(await renderStatuses(db, c.get("config"), ids, viewer, "account", related));
});

const followList = (direction: "followers" | "following") => async (c: Ctx) => {
  const id = pathId(c);
  const page = readPage(await readParams(c), 40, 80);
  const db = c.get("db");
  const viewer = viewerAccountId(c);
  const [a, rel] = await Promise.all([getAccount(db, id), viewer && viewer !== id ? renderRelationships(db, viewer, [id]) : Promise.resolve([])]);
  if (!a) throw notFound();
  // Mastodon shows an empty list, not an error, when the collection is hidden from this viewer.
  const hidden = !!a.suspendedAt || (!!a.hideCollections && viewer !== id) || rel[0]?.blocked_by === true;
  if (hidden) return c.json([]);
  return accountPage(c, await followPage(db, id, viewer, direction, page), page);
};
r.get("/:id/followers", publicScope("read:accounts"), followList("followers"));
r.get("/:id/following", publicScope("read:accounts"), followList("following"));

r.get("/:id/featured_tags", publicScope("read:accounts"), async (c) => {
  const id = pathId(c);
  const db = c.get("db");
  const a = await getAccount(db, id);
  if (!a) throw notFound();
  if (a.suspendedAt) return c.json([]);
  const cfg = c.get("config");
  const rows = await featuredTagsOf(db, id);
  return c.json(rows.map((t) => renderProfileFeaturedTag(cfg, t, a)));
});

r.get("/:id/endorsements", publicScope("read:accounts"), async (c) => {
  const id = pathId(c);
  const page = readPage(await readParams(c), 40, 80);
  const db = c.get("db");
  const a = await getAccount(db, id);
  if (!a) throw notFound();
  if (a.suspendedAt) return c.json([]);
  return accountPage(c, await endorsementsPage(db, id, page), page);
});

// Identity proofs were removed from Mastodon (3.5); the endpoint stays and answers an empty list.
r.get("/:id/identity_proofs", requireUser("read:accounts"), async (c) => {
  if (!(await getAccount(c.get("db"), pathId(c)))) throw notFound();
  return c.json([]);
});

r.get("/:id/lists", requireUser("read:lists"), async (c) => {
  const id = pathId(c);
  const rows = await listsContaining(c.get("db"), me(c).account.id, id);
  return c.json(rows.map(renderList));
});

// ---- actions ----

const followSchema = lazy(() =>
  z
    .object({
      reblogs: zBool,
      notify: zBool,
      languages: zArray(z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, "is not a valid language code"), 100),
    })
    .passthrough(),
);

export async function readFollowOptions(c: Ctx) {
  const p = await parse(c, followSchema());
  const langs = p.languages === undefined ? undefined : p.languages.length ? [...new Set(p.languages)] : null;
  return { reblogs: p.reblogs, notify: p.notify, languages: langs };
}

r.post("/:id/follow", requireUser("write:follows"), rateLimited("follows"), async (c) => {
  const id = pathId(c);
  const opts = await readFollowOptions(c);
  const viewer = me(c).account;
  return c.json(await follow(c.get("db"), c.get("fx"), viewer.id, id, opts, { silenced: !!viewer.silencedAt }));
});

r.post("/:id/unfollow", requireUser("write:follows"), async (c) => c.json(await unfollow(c.get("db"), c.get("fx"), me(c).account.id, pathId(c))));

r.post("/:id/remove_from_followers", requireUser("write:follows"), async (c) =>
  c.json(await removeFromFollowers(c.get("db"), c.get("fx"), me(c).account.id, pathId(c))),
);

r.post("/:id/block", requireUser("write:blocks"), async (c) => c.json(await block(c.get("db"), c.get("fx"), me(c).account.id, pathId(c))));
r.post("/:id/unblock", requireUser("write:blocks"), async (c) => c.json(await unblock(c.get("db"), c.get("fx"), me(c).account.id, pathId(c))));

const MAX_MUTE_SECONDS = 100 * 365 * 24 * 3600;
const muteSchema = lazy(() =>
  z
    .object({
      notifications: zBool,
      duration: z.preprocess((v) => (v === null ? undefined : v), zInt).pipe(z.number().int().min(0).max(MAX_MUTE_SECONDS).optional()),
    })
    .passthrough(),
);

r.post("/:id/mute", requireUser("write:mutes"), async (c) => {
  const id = pathId(c);
  const p = await parse(c, muteSchema());
  return c.json(await mute(c.get("db"), c.get("fx"), me(c).account.id, id, { notifications: p.notifications ?? true, duration: p.duration ?? 0 }));
});
r.post("/:id/unmute", requireUser("write:mutes"), async (c) => c.json(await unmute(c.get("db"), c.get("fx"), me(c).account.id, pathId(c))));

r.post("/:id/note", requireUser("write:accounts"), async (c) => {
  const id = pathId(c);
  const p = await parse(c, z.object({ comment: z.preprocess((v) => (v === null ? undefined : v), zStr(MAX_NOTE_CHARS).optional()) }).passthrough());
  return c.json(await setAccountNote(c.get("db"), me(c).account.id, id, p.comment ?? ""));
});

const endorseRoute = async (c: Ctx) => c.json(await endorse(c.get("db"), me(c).account.id, pathId(c)));
const unendorseRoute = async (c: Ctx) => c.json(await unendorse(c.get("db"), me(c).account.id, pathId(c)));
r.post("/:id/pin", requireUser("write:accounts"), endorseRoute);
r.post("/:id/endorse", requireUser("write:accounts"), endorseRoute);
r.post("/:id/unpin", requireUser("write:accounts"), unendorseRoute);
r.post("/:id/unendorse", requireUser("write:accounts"), unendorseRoute);

export default r;
