// GET /api/v1/trends (alias of /tags), /api/v1/trends/tags, /statuses, /links: public, paged with `offset` and
// `limit` like Mastodon's trends controllers (tags and links 10 by default, 20 at most; statuses 20 and 40), with
// `Link` headers carrying the next and previous offsets. Mounted at /api/v1/trends.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { renderTrendLink } from "../../../entities/statuses/preview-card";
import { renderStatuses } from "../../../entities/statuses/status";
import { renderTag } from "../../../entities/instance/tag";
import { readOffsetPage, setOffsetLinks } from "../../../lib/http/pagination";
import { viewerAccountId } from "../../../oauth/guard";
import { trendingLinks, trendingStatusIds, trendingTags } from "../../../queries/instance/trends";
import { preferredLanguages } from "../../../trends/languages";

const r = routeGroup();

/** The reader's languages (src/trends/languages.ts). */
const languagesOf = (c: Ctx) => preferredLanguages(viewerAccountId(c) ? c.get("viewer")?.user : null, c.req.header("accept-language"));

const tagsHandler = async (c: Ctx) => {
  const page = await readOffsetPage(c, 10, 20);
  const viewerId = viewerAccountId(c);
  const rows = await trendingTags(c.get("db"), viewerId, page);
  const cfg = c.get("config");
  setOffsetLinks(c, page, rows.length);
  return c.json(rows.map((t) => renderTag(cfg, t.tag, t.history, viewerId ? { following: t.following } : undefined)));
};

r.get("/", tagsHandler);
r.get("/tags", tagsHandler);

r.get("/statuses", async (c) => {
  const page = await readOffsetPage(c, 20, 40);
  const viewerId = viewerAccountId(c);
  const db = c.get("db");
  const ids = await trendingStatusIds(db, viewerId, languagesOf(c), page);
  const body = await renderStatuses(db, c.get("config"), ids, viewerId);
  setOffsetLinks(c, page, ids.length);
  c.header("Vary", "Authorization, Accept-Language");
  return c.json(body);
});

r.get("/links", async (c) => {
  const page = await readOffsetPage(c, 10, 20);
  const rows = await trendingLinks(c.get("db"), languagesOf(c), page);
  setOffsetLinks(c, page, rows.length);
  c.header("Vary", "Authorization, Accept-Language");
  return c.json(rows.map((l) => renderTrendLink(c.get("config"), l.card, l.history)));
});

export default r;
