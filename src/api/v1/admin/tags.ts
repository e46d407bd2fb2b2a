// /api/v1/admin/tags (Mastodon's Api::V1::Admin::TagsController): every hashtag by id (Link-paged, 100 by default),
// one hashtag, and PUT /:id (display_name, trendable, usable; listable accepted and ignored). manage_taxonomies.
import * as z from "zod";
import { renderAdminTag } from "../../../entities/admin/admin-trends";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, pathId, readParams, zBool, zStr } from "../../../lib/http/params";
import { lazy } from "../../../lib/limits/lazy";
import { adminTag, adminTags, updateAdminTag } from "../../../services/admin/tags";
import { moderator, staffRouter } from "./staff";

const { r, read, write } = staffRouter("manage_taxonomies");

const updateBody = lazy(() => z.object({ display_name: zStr(200).optional(), trendable: zBool, usable: zBool, listable: zBool }));

r.get("/", read, async (c) => {
  const page = readPage(await readParams(c), 100, 200);
  const rows = await adminTags(c.get("db"), page);
  setLinkHeader(c, rows[0]?.tag.id, rows.at(-1)?.tag.id, rows.length === page.limit);
  const cfg = c.get("config");
  return c.json(rows.map((t) => renderAdminTag(cfg, t.tag, t.history, false)));
});

r.get("/:id", read, async (c) => {
  const t = await adminTag(c.get("db"), pathId(c));
  return c.json(renderAdminTag(c.get("config"), t.tag, t.history, false));
});

r.put("/:id", write, async (c) => {
  const p = await parse(c, updateBody());
  const t = await updateAdminTag(c.get("db"), moderator(c), pathId(c), { displayName: p.display_name, trendable: p.trendable, usable: p.usable });
  return c.json(renderAdminTag(c.get("config"), t.tag, t.history, false));
});

export default r;
