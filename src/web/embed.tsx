// A status for other sites: its embed page (`/@user/:id/embed`, an iframe's document any site may frame: no form, no
// script) and GET /api/oembed (Mastodon's Api::OEmbedController, docs.joinmastodon.org/methods/oembed), whose `html`
// is that iframe. Local public and unlisted original posts only, named by their page (`/@user/:id`) or their id
// (`/users/user/statuses/:id`); anything else is Mastodon's 404 `Record not found`.
import { renderOembed } from "../entities/statuses/oembed";
import { localStatusOfUrl } from "../entities/urls";
import { readParams } from "../lib/http/params";
import { routeGroup } from "../route-group";
import { page } from "./layout";
import { publicLocalStatus } from "./page-queries";
import { EmbedPage, NotFoundPage } from "./public-pages";

const r = routeGroup();

r.get("/:handle{@[^/]+}/:id/embed", async (c) => {
  const cfg = c.get("config");
  const status = await publicLocalStatus(c.get("db"), cfg, c.req.param("handle")!.slice(1), c.req.param("id")!);
  if (!status) return page(c, <NotFoundPage siteTitle={cfg.title} />, 404);
  return page(c, <EmbedPage siteTitle={cfg.title} status={status} domain={cfg.domain} />, 200, { embeddable: true });
});

/** Mastodon's default iframe width; a given maxwidth or maxheight is taken within these bounds. */
const DEFAULT_WIDTH = 400;
const MAX_SIDE = 10_000;
const side = (v: unknown): number | null => {
  const n = typeof v === "string" && /^\d{1,5}$/.test(v) ? Number(v) : Number.NaN;
  return n >= 1 && n <= MAX_SIDE ? n : null;
};

r.get("/api/oembed", async (c) => {
  const p = await readParams(c);
  const cfg = c.get("config");
  const named = typeof p.url === "string" ? localStatusOfUrl(cfg, p.url) : null;
  const status = named ? await publicLocalStatus(c.get("db"), cfg, named.username, named.id) : null;
  if (!status?.url) return c.json({ error: "Record not found" }, 404);
  c.header("Cache-Control", "public, max-age=300");
  return c.json(renderOembed(cfg, status, { width: side(p.maxwidth) ?? DEFAULT_WIDTH, height: side(p.maxheight) }));
});

export default r;
