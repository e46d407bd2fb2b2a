import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { renderFeaturedTag, renderTag } from "../../../entities/instance/tag";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { parse, zStr } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { deleteFeaturedTag, featuredTagsOf, featuredTagSuggestions, featureTag } from "../../../services/accounts/featured-tags";
import { requireTagName } from "../../../services/tags/tags-follow";

const r = routeGroup();

const read = requireUser("read:accounts");
const write = requireUser("write:accounts");

r.get("/", read, async (c) => {
  const v = me(c);
  const cfg = c.get("config");
  return c.json((await featuredTagsOf(c.get("db"), v.account.id)).map((f) => renderFeaturedTag(cfg, f, v.account.username)));
});

r.get("/suggestions", read, async (c) => {
  const cfg = c.get("config");
  const rows = await featuredTagSuggestions(c.get("db"), me(c).account.id);
  return c.json(rows.map((t) => renderTag(cfg, t.tag, t.history, { following: false, featuring: false })));
});

r.post("/", write, async (c) => {
  const p = await parse(c, z.object({ name: zStr(200) }));
  const name = requireTagName(p.name);
  const v = me(c);
  const f = await featureTag(c.get("db"), v.account.id, p.name.replace(/^#/, ""), name, false);
  return c.json(renderFeaturedTag(c.get("config"), f, v.account.username));
});

r.delete("/:id", write, async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  await deleteFeaturedTag(c.get("db"), me(c).account.id, id);
  return c.json({});
});

export default r;
