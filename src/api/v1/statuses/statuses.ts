// /api/v1/statuses: posting, reading, editing and deleting statuses, their context and history, and the
// interactions on them (favourite, reblog, bookmark, pin, conversation mute).
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv, Ctx } from "../../../context";
import { renderAccount } from "../../../entities/accounts/account";
import { renderContext } from "../../../entities/statuses/context";
import { renderStatus, renderStatuses } from "../../../entities/statuses/status";
import { notFound, unauthorized, wrongScope } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, zArray, zBool, zId, zInt, zStr, pathId } from "../../../lib/http/params";
import { rateLimited } from "../../../http/rate-limit";
import { me, requireUser, viewerAccountId } from "../../../oauth/guard";
import { scopeAllows } from "../../../oauth/scopes";
import { deleteStatus } from "../../../services/statuses/delete-status";
import { editStatus, statusHistory, statusSource } from "../../../services/statuses/edit-status";
import { bookmark, unbookmark } from "../../../services/interactions/bookmarks";
import { muteConversation } from "../../../services/interactions/conversation-mutes";
import { favourite, unfavourite } from "../../../services/interactions/favourites";
import { favouritedBy, rebloggedBy, type AccountPage } from "../../../queries/statuses/interacted-by";
import { pin, unpin } from "../../../services/interactions/pins";
import { reblog, unreblog } from "../../../services/interactions/reblogs";
import { postStatus } from "../../../services/statuses/post-status";
import { statusContextIds } from "../../../queries/statuses/status-context";
import { backfillForContext } from "../../../federation/remote/backfill";
import { quoteRoutes } from "./quotes";

const r = routeGroup();

/** Public reads: a token, when sent, must be valid and carry the scope (Mastodon's authorize_if_got_token!). */
export const scopeIfToken = (scope: string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.get("invalidToken")) throw unauthorized();
    const v = c.get("viewer");
    if (v && !scopeAllows(v.scopes, scope)) throw wrongScope();
    await next();
  });

const blank = (v: unknown) => (v === null || v === "" ? undefined : v);
const opt = <T extends z.ZodTypeAny>(s: T) => z.preprocess(blank, s.optional());
const optText = (max: number) => z.preprocess((v) => (v === null ? undefined : v), zStr(max).optional());

const pollSchema = lazy(() =>
  z.object({
    options: zArray(zStr(10_000), 100),
    expires_in: zInt,
    multiple: zBool,
    hide_totals: zBool,
  }),
);

const postSchema = lazy(() =>
  z.object({
    status: optText(1_000_000),
    spoiler_text: optText(1_000_000),
    sensitive: zBool,
    visibility: opt(z.enum(["public", "unlisted", "private", "direct"])),
    language: opt(zStr(50)),
    in_reply_to_id: opt(zId),
    media_ids: zArray(zId, 20),
    poll: opt(pollSchema()),
    scheduled_at: opt(zStr(100)),
    allowed_mentions: zArray(zId, 500),
    quoted_status_id: opt(zId),
    quote_approval_policy: opt(z.enum(["public", "followers", "nobody"])),
  }),
);

const editSchema = lazy(() =>
  z.object({
    status: optText(1_000_000),
    spoiler_text: optText(1_000_000),
    sensitive: zBool,
    language: opt(zStr(50)),
    media_ids: z.preprocess((v) => (v === "" ? [] : v), zArray(zId, 20)),
    media_attributes: zArray(z.object({ id: opt(zId), description: optText(10_000), focus: opt(zStr(50)) }), 20),
    poll: opt(pollSchema()),
  }),
);

// ---- collection ----

r.post("/", requireUser("write:statuses"), rateLimited("statuses"), async (c) => {
  const input = await parse(c, postSchema());
  const v = me(c);
  const res = await postStatus(c.get("db"), c.get("fx"), c.get("config"), v, input, c.req.header("idempotency-key") ?? null);
  // 200 as Mastodon answers (clients were written against it), for a new status and for an idempotent replay alike.
  return c.json(res.status, 200);
});

r.get("/", scopeIfToken("read:statuses"), async (c) => {
  const { id } = await parse(c, z.object({ id: zArray(z.unknown(), 1000) }));
  const ids = [...new Set((id ?? []).map((x) => parseId(x)).filter((x): x is string => !!x))].slice(0, 40);
  return c.json(await renderStatuses(c.get("db"), c.get("config"), ids, viewerAccountId(c)));
});

// ---- one status ----

r.get("/:id", scopeIfToken("read:statuses"), async (c) => {
  const out = await renderStatus(c.get("db"), c.get("config"), pathId(c), viewerAccountId(c));
  if (!out) throw notFound();
  return c.json(out);
});

r.delete("/:id", requireUser("write:statuses"), rateLimited("deletes"), async (c) => {
  const { delete_media } = await parse(c, z.object({ delete_media: zBool }));
  return c.json(await deleteStatus(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id, { deleteMedia: delete_media === true }));
});

r.put("/:id", requireUser("write:statuses"), rateLimited("statuses"), async (c) => {
  const id = pathId(c);
  const input = await parse(c, editSchema());
  return c.json(await editStatus(c.get("db"), c.get("fx"), c.get("config"), me(c), id, input));
});

r.get("/:id/history", scopeIfToken("read:statuses"), async (c) => {
  return c.json(await statusHistory(c.get("db"), c.get("config"), pathId(c), viewerAccountId(c)));
});

r.get("/:id/source", requireUser("read:statuses"), async (c) => {
  return c.json(await statusSource(c.get("db"), pathId(c), me(c).account.id));
});

r.get("/:id/context", scopeIfToken("read:statuses"), async (c) => {
  // A remote thread's missing statuses are fetched first, within a fixed budget (src/federation/remote/backfill.ts).
  await backfillForContext(c.get("db"), c.get("config"), c.get("fx"), pathId(c), viewerAccountId(c));
  const viewerId = viewerAccountId(c);
  return c.json(await renderContext(c.get("db"), c.get("config"), await statusContextIds(c.get("db"), pathId(c), viewerId), viewerId));
});

// ---- interactions ----

r.post("/:id/favourite", requireUser("write:favourites"), rateLimited("favourites"), async (c) =>
  c.json(await favourite(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id)),
);
r.post("/:id/unfavourite", requireUser("write:favourites"), async (c) =>
  c.json(await unfavourite(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id)),
);

r.post("/:id/reblog", requireUser("write:statuses"), rateLimited("statuses"), async (c) => {
  const { visibility } = await parse(c, z.object({ visibility: opt(z.enum(["public", "unlisted", "private"])) }));
  return c.json((await reblog(c.get("db"), c.get("fx"), c.get("config"), me(c), pathId(c), visibility)).status);
});
r.post("/:id/unreblog", requireUser("write:statuses"), rateLimited("deletes"), async (c) => {
  return c.json((await unreblog(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id)).status);
});

r.post("/:id/bookmark", requireUser("write:bookmarks"), async (c) => c.json(await bookmark(c.get("db"), c.get("config"), pathId(c), me(c).account.id)));
r.post("/:id/unbookmark", requireUser("write:bookmarks"), async (c) => c.json(await unbookmark(c.get("db"), c.get("config"), pathId(c), me(c).account.id)));

r.post("/:id/pin", requireUser("write:accounts"), async (c) => c.json(await pin(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id)));
r.post("/:id/unpin", requireUser("write:accounts"), async (c) => c.json(await unpin(c.get("db"), c.get("fx"), c.get("config"), pathId(c), me(c).account.id)));

r.post("/:id/mute", requireUser("write:mutes"), async (c) => c.json(await muteConversation(c.get("db"), c.get("config"), pathId(c), me(c).account.id, true)));
r.post("/:id/unmute", requireUser("write:mutes"), async (c) =>
  c.json(await muteConversation(c.get("db"), c.get("config"), pathId(c), me(c).account.id, false)),
);

// ---- quotes (Mastodon 4.5) ----

quoteRoutes(r);

// ---- who interacted ----

function accountPage(c: Ctx, page: AccountPage) {
  setLinkHeader(c, page.firstCursor, page.lastCursor, page.full);
  const cfg = c.get("config");
  return c.json(page.accounts.map((a) => renderAccount(cfg, a)));
}

r.get("/:id/favourited_by", scopeIfToken("read:accounts"), async (c) => {
  const id = pathId(c);
  const page = readPage(c.req.query(), 40, 80);
  return accountPage(c, await favouritedBy(c.get("db"), id, viewerAccountId(c), page));
});

r.get("/:id/reblogged_by", scopeIfToken("read:accounts"), async (c) => {
  const id = pathId(c);
  const page = readPage(c.req.query(), 40, 80);
  return accountPage(c, await rebloggedBy(c.get("db"), id, viewerAccountId(c), page));
});

export default r;
