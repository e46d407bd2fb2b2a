// /api/v1/domain_blocks: the viewer's own domain blocks (a list of domain strings); GET /preview (Mastodon 4.4): how
// many accounts of a domain the viewer follows and is followed by, shown before blocking it.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, readParams, zStr } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { domainRelationCounts } from "../../../queries/accounts/accounts";
import { blockDomain, domainBlocksPage, normalizeDomain, unblockDomain } from "../../../services/relationships/domain-blocks-user";

const r = routeGroup();

const domainSchema = lazy(() => z.object({ domain: zStr(300) }).passthrough());

r.get("/", requireUser("read:blocks"), async (c) => {
  const page = readPage(await readParams(c), 100, 200);
  const rows = await domainBlocksPage(c.get("db"), me(c).account.id, page);
  setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length === page.limit);
  return c.json(rows.map((x) => x.domain));
});

r.get("/preview", requireUser("follow", "write:blocks"), async (c) => {
  const p = await parse(c, domainSchema());
  const n = await domainRelationCounts(c.get("db"), me(c).account.id, normalizeDomain(p.domain));
  return c.json({ following_count: n.following, followers_count: n.followers });
});

r.post("/", requireUser("write:blocks"), async (c) => {
  const p = await parse(c, domainSchema());
  await blockDomain(c.get("db"), c.get("fx"), me(c).account.id, normalizeDomain(p.domain));
  return c.json({});
});

r.delete("/", requireUser("write:blocks"), async (c) => {
  const p = await parse(c, domainSchema());
  await unblockDomain(c.get("db"), c.get("fx"), me(c).account.id, normalizeDomain(p.domain));
  return c.json({});
});

export default r;
