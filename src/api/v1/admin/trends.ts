// Trend review (Mastodon's /api/v1/admin/trends/{tags,statuses,links}, their :id/approve and :id/reject, and
// /links/publishers): the lists show every trend row, allowed or not, with the admin entities; paged with offset and
// limit like the public trends. manage_taxonomies only (Mastodon shows signed-in users without it the public list;
// Tern refuses them). Mounted at /api/v1/admin/trends.
import { renderAdminTag, renderAdminTrendLink, renderAdminTrendStatus, renderPreviewCardProvider } from "../../../entities/admin/admin-trends";
import { renderStatuses } from "../../../entities/statuses/status";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { pathId, readParams } from "../../../lib/http/params";
import {
  adminTrendLinks,
  adminTrendProviders,
  adminTrendStatuses,
  adminTrendTags,
  reviewLink,
  reviewProvider,
  reviewStatus,
  reviewTag,
} from "../../../services/admin/trends";
import { me } from "../../../oauth/guard";
import { readOffsetPage, setOffsetLinks } from "../../../lib/http/pagination";
import { moderator, staffRouter } from "./staff";

const { r, read, write } = staffRouter("manage_taxonomies");

r.get("/tags", read, async (c) => {
  const page = await readOffsetPage(c, 10, 20);
  const rows = await adminTrendTags(c.get("db"), me(c).account.id, page);
  setOffsetLinks(c, page, rows.length);
  const cfg = c.get("config");
  return c.json(rows.map((t) => renderAdminTag(cfg, t.tag, t.history, t.following)));
});

for (const [verb, approve] of [
  ["approve", true],
  ["reject", false],
] as const) {
  r.post(`/tags/:id/${verb}`, write, async (c) => {
    const { tag, history } = await reviewTag(c.get("db"), moderator(c), pathId(c), approve);
    return c.json(renderAdminTag(c.get("config"), tag, history, false));
  });
  r.post(`/statuses/:id/${verb}`, write, async (c) => {
    const id = pathId(c);
    await reviewStatus(c.get("db"), moderator(c), id, approve);
    const [body] = await renderStatuses(c.get("db"), c.get("config"), [id], me(c).account.id);
    return c.json(body ? renderAdminTrendStatus(body, false) : {});
  });
  r.post(`/links/publishers/:id/${verb}`, write, async (c) =>
    c.json(renderPreviewCardProvider(await reviewProvider(c.get("db"), moderator(c), pathId(c), approve))),
  );
  r.post(`/links/:id/${verb}`, write, async (c) =>
    c.json(renderAdminTrendLink(c.get("config"), await reviewLink(c.get("db"), moderator(c), pathId(c), approve))),
  );
}

r.get("/statuses", read, async (c) => {
  const page = await readOffsetPage(c, 20, 40);
  const db = c.get("db");
  const rows = await adminTrendStatuses(db, page);
  const review = new Map(rows.map((s) => [s.id, s.requiresReview]));
  const body = await renderStatuses(db, c.get("config"), [...review.keys()], me(c).account.id);
  setOffsetLinks(c, page, rows.length);
  return c.json(body.map((s) => renderAdminTrendStatus(s, review.get(s.id) ?? true)));
});

r.get("/links", read, async (c) => {
  const page = await readOffsetPage(c, 10, 20);
  const rows = await adminTrendLinks(c.get("db"), page);
  setOffsetLinks(c, page, rows.length);
  return c.json(rows.map((l) => renderAdminTrendLink(c.get("config"), l)));
});

r.get("/links/publishers", read, async (c) => {
  const page = readPage(await readParams(c), 100, 100);
  const rows = await adminTrendProviders(c.get("db"), page);
  setLinkHeader(c, rows[0]?.id, rows.at(-1)?.id, rows.length === page.limit);
  return c.json(rows.map(renderPreviewCardProvider));
});

export default r;
