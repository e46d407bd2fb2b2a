import { routeGroup } from "../../../route-group";
import { renderTag } from "../../../entities/instance/tag";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { followedTags } from "../../../services/tags/tags-follow";

const r = routeGroup();

// Paged by tag_follows ids (not tag ids), like Mastodon; clients only follow the Link header.
r.get("/", requireUser("read:follows"), async (c) => {
  const page = readPage(await readParams(c), 100, 200);
  const rows = await followedTags(c.get("db"), me(c).account.id, page);
  setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length === page.limit);
  const cfg = c.get("config");
  return c.json(rows.map((t) => renderTag(cfg, t.tag, t.history, { following: true })));
});

export default r;
