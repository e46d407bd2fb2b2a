// A status for other sites: its embed page (`/@user/:id/embed`, an iframe's document any site may frame: no form, no
// script) and GET /api/oembed (Mastodon's Api::OEmbedController, docs.joinmastodon.org/methods/oembed), whose `html`
// is that iframe. Local public and unlisted original posts only, named by their page (`/@user/:id`) or their id
// (`/users/user/statuses/:id`); anything else is Mastodon's 404 `Record not found`.
import type { Ctx } from "../context";
import { renderStatus } from "../entities/statuses/status";
import { readParams } from "../lib/http/params";
import { parseId } from "../lib/text/ids";
import { escapeHtml } from "../lib/text/text";
import { routeGroup } from "../route-group";
import { page } from "./layout";
import { findLocalAccount, publicStatusOf } from "./page-queries";
import { EmbedPage, NotFoundPage } from "./public-pages";

const r = routeGroup();

/** The rendered status `handle`'s post `rawId` names, when it is a local public or unlisted original post. */
async function embeddable(c: Ctx, handle: string, rawId: string) {
  const id = parseId(rawId);
  if (!id) return null;
  const db = c.get("db");
  const account = await findLocalAccount(db, handle);
  if (!account || !(await publicStatusOf(db, account.id, id))) return null;
  return renderStatus(db, c.get("config"), id, null);
}

/** The account and status a URL of this server names: its page or its ActivityPub id. */
export function statusOfUrl(origin: string, url: string): { handle: string; id: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.origin !== origin) return null;
  const m = /^\/(?:@([A-Za-z0-9_]{1,30})|users\/([A-Za-z0-9_]{1,30})\/statuses)\/(\d{1,19})\/?$/.exec(u.pathname);
  return m ? { handle: (m[1] ?? m[2])!, id: m[3]! } : null;
}

r.get("/:handle{@[^/]+}/:id/embed", async (c) => {
  const cfg = c.get("config");
  const status = await embeddable(c, c.req.param("handle")!.slice(1), c.req.param("id")!);
  if (!status) return page(c, <NotFoundPage siteTitle={cfg.title} />, 404);
  return page(c, <EmbedPage siteTitle={cfg.title} status={status} domain={cfg.domain} />, 200, undefined, { embeddable: true });
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
  const named = typeof p.url === "string" ? statusOfUrl(cfg.origin, p.url) : null;
  const status = named ? await embeddable(c, named.handle, named.id) : null;
  if (!status?.url) return c.json({ error: "Record not found" }, 404);
  const width = side(p.maxwidth) ?? DEFAULT_WIDTH;
  const height = side(p.maxheight);
  const a = status.account;
  const html =
    `<iframe src="${escapeHtml(`${status.url}/embed`)}" class="mastodon-embed" style="max-width: 100%; border: 0" ` +
    `width="${width}"${height ? ` height="${height}"` : ""} allowfullscreen="allowfullscreen"></iframe>`;
  c.header("Cache-Control", "public, max-age=300");
  return c.json({
    type: "rich",
    version: "1.0",
    title: `New status by ${a.username}`,
    author_name: a.display_name || a.username,
    author_url: a.url,
    provider_name: cfg.domain,
    provider_url: `${cfg.origin}/`,
    cache_age: 86_400,
    html,
    width,
    height,
  });
});

export default r;
