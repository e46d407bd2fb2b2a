// GET /api/v1/timelines/{home,public,tag/:hashtag,list/:list_id,direct,link}
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv, Ctx } from "../../../context";
import { renderStatuses } from "../../../entities/statuses/status";
import type { FilterContext } from "../../../db/schema/index";
import { ApiError, notFound, unauthorized, wrongScope } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zBool } from "../../../lib/http/params";
import { normalizeTag } from "../../../lib/text/text";
import { me, requireUser, viewerAccountId } from "../../../oauth/guard";
import { scopeAllows } from "../../../oauth/scopes";
import { directTimeline, homeTimeline, linkTimeline, listTimeline, publicTimeline, tagTimeline, type PageIds } from "../../../queries/statuses/feeds";
import { touchLastActive } from "../../../timelines/activity";
import { startRegeneration } from "../../../timelines/home-feed-do";

const r = routeGroup();

/** Public timelines: a token is optional, but a bad one is 401 and one without read:statuses is 403 (Mastodon). */
const optionalRead = createMiddleware<AppEnv>(async (c, next) => {
  if (c.get("invalidToken")) throw unauthorized();
  const v = c.get("viewer");
  if (v && !scopeAllows(v.scopes, "read:statuses")) throw wrongScope();
  await next();
});

/** Signed-out access to public and hashtag timelines follows the public-preview setting (Mastodon: 422). */
function requireViewerUnlessPreview(c: Ctx): string | null {
  const viewer = viewerAccountId(c);
  if (!viewer && !c.get("config").publicPreview) throw new ApiError(422, "This method requires an authenticated user");
  return viewer;
}

async function respond(c: Ctx, p: PageIds, viewerId: string | null, status: 200 | 206 = 200, filterContext?: FilterContext) {
  const body = await renderStatuses(c.get("db"), c.get("config"), p.ids, viewerId, { filterContext }, p.related);
  setLinkHeader(c, p.first, p.last, p.full);
  return c.json(body, status);
}

r.get("/home", requireUser("read:statuses"), async (c) => {
  const v = me(c);
  const page = readPage(await readParams(c), 20, 40);
  let status: 200 | 206 = 200;
  if (v.feedDroppedAt != null) {
    // The feed was dropped for inactivity: the HomeFeed object rebuilds it once; meanwhile whatever is there is shown.
    if ((await startRegeneration(c.env, v.account.id, v.feedDroppedAt)) === "running") status = 206;
  }
  touchLastActive(c, v);
  const p = await homeTimeline(c.get("db"), v.account.id, page);
  return respond(c, p, v.account.id, status, "home");
});

const publicSchema = lazy(() => z.object({ local: zBool, remote: zBool, only_media: zBool }).passthrough());

r.get("/public", optionalRead, async (c) => {
  const viewer = requireViewerUnlessPreview(c);
  const q = await parse(c, publicSchema());
  const page = readPage(q, 20, 40);
  const languages = viewer ? (c.get("viewer")?.user?.chosenLanguages ?? null) : null;
  const p = await publicTimeline(c.get("db"), viewer, { local: q.local, remote: q.remote, onlyMedia: q.only_media, languages }, page);
  return respond(c, p, viewer, 200, "public");
});

/** Mastodon's TagFeed takes at most 4 extra tags per mode; more are ignored, not refused. */
const tagList = lazy(() =>
  z.preprocess((v) => {
    if (v === undefined || v === null || v === "") return undefined;
    const arr = Array.isArray(v) ? v : typeof v === "object" ? Object.values(v as object) : [v];
    return arr
      .filter((x): x is string => typeof x === "string")
      .map((x) => normalizeTag(x.slice(0, 200)))
      .filter(Boolean)
      .slice(0, 4);
  }, z.array(z.string()).optional()),
);

const tagSchema = lazy(() => publicSchema().extend({ any: tagList(), all: tagList(), none: tagList() }));

r.get("/tag/:hashtag", optionalRead, async (c) => {
  const viewer = requireViewerUnlessPreview(c);
  const q = await parse(c, tagSchema());
  const page = readPage(q, 20, 40);
  const tag = normalizeTag(c.req.param("hashtag").slice(0, 200));
  if (!tag) return c.json([]);
  const languages = viewer ? (c.get("viewer")?.user?.chosenLanguages ?? null) : null;
  const p = await tagTimeline(
    c.get("db"),
    viewer,
    { tag, any: q.any, all: q.all, none: q.none, local: q.local, remote: q.remote, onlyMedia: q.only_media, languages },
    page,
  );
  return respond(c, p, viewer, 200, "public");
});

const linkSchema = lazy(() => z.object({ url: z.string().max(2048).optional() }).passthrough());

/** Mastodon 4.3: statuses sharing a trending link (`url` is the card's URL); a link that is not trending is a 404. */
r.get("/link", optionalRead, async (c) => {
  const viewer = requireViewerUnlessPreview(c);
  const q = await parse(c, linkSchema());
  if (!q.url) throw new ApiError(400, "Missing parameter: url");
  const p = await linkTimeline(c.get("db"), viewer, q.url, readPage(q, 20, 40));
  if (!p) throw notFound();
  return respond(c, p, viewer, 200, "public");
});

r.get("/list/:list_id", requireUser("read:lists"), async (c) => {
  const v = me(c);
  const id = parseId(c.req.param("list_id"));
  if (!id) throw notFound();
  const page = readPage(await readParams(c), 20, 40);
  const p = await listTimeline(c.get("db"), v.account.id, id, page);
  if (!p) throw notFound();
  return respond(c, p, v.account.id, 200, "home");
});

r.get("/direct", requireUser("read:statuses"), async (c) => {
  const v = me(c);
  const page = readPage(await readParams(c), 20, 40);
  const p = await directTimeline(c.get("db"), v.account.id, page);
  c.header("Deprecation", "@1660521600");
  return respond(c, p, v.account.id);
});

export default r;
