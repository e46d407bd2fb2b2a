// What a linked page says about itself, for its preview card: OpenGraph / Twitter <meta> tags, <title>, <html lang>,
// <link rel=canonical> and the oEmbed discovery link, read with HTMLRewriter (lol-html, in workerd) in one pass; then
// the card's fields as Mastodon's LinkDetailsExtractor and FetchLinkCardForURLService
// (app/lib/link_details_extractor.rb, app/services/fetch_link_card_for_url_service.rb) derive them.
//
// Everything here is text or a checked URL. lol-html hands attribute values and <title> text over as written (entities
// not decoded, cloudflare/lol-html#131), so they are decoded here and kept as plain text (clients escape them). The
// only HTML a card carries is an <iframe> this file writes itself, from an https `src` and two integers: a player from
// `twitter:player`, or the iframe found in an oEmbed `video` answer (Mastodon keeps only iframes there too,
// Sanitize::Config::MASTODON_OEMBED). oEmbed `rich` answers are refused, as Mastodon does ("most providers rely on
// <script> tags"), and anything else an oEmbed `html` holds is dropped (security D10, E8).
import { escapeHtml, normalizeLanguage } from "../../lib/text/text";
import { httpUrl } from "../../lib/http/urls";

const MAX_TITLE = 300;
const MAX_DESCRIPTION = 1000;
const MAX_NAME = 200;
const MAX_DIMENSION = 4096;

export interface PageDetails {
  /** meta tags by property or name (first occurrence wins, as Mastodon's xpath `pick`), decoded */
  meta: Map<string, string>;
  /** meta tags by name only (Mastodon's meta_tag: `description`) */
  metaByName: Map<string, string>;
  title: string | null;
  lang: string | null;
  canonical: string | null;
  oembed: string | null;
}

export interface CardFields {
  url: string;
  title: string;
  description: string;
  type: "link" | "photo" | "video";
  linkType: "article" | "unknown";
  authorName: string;
  authorUrl: string;
  providerName: string;
  providerUrl: string;
  html: string;
  width: number;
  height: number;
  image: string | null;
  imageDescription: string;
  embedUrl: string;
  language: string | null;
  publishedAt: number | null;
}

// ---------- text ----------

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  sbquo: "‚",
  ldquo: "“",
  rdquo: "”",
  bdquo: "„",
  laquo: "«",
  raquo: "»",
  middot: "·",
  bull: "•",
  copy: "©",
  reg: "®",
  trade: "™",
  deg: "°",
  euro: "€",
  pound: "£",
  yen: "¥",
  times: "×",
  shy: "\u00ad",
  zwj: "\u200d",
  zwnj: "\u200c",
};

// HTML 4's Latin-1 names, U+00A0 to U+00FF in order (accented letters are what titles use most).
const LATIN1 =
  "nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml";
LATIN1.split(" ").forEach((name, i) => {
  NAMED[name] ??= String.fromCharCode(0xa0 + i);
});

/** Character references decoded (numeric, and the named ones pages use in titles); unknown ones stay as written. */
export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (all, ref: string) => {
    if (ref[0] === "#") {
      const cp = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (!Number.isFinite(cp) || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return "\ufffd";
      return String.fromCodePoint(cp);
    }
    return Object.hasOwn(NAMED, ref) ? (NAMED[ref] ?? all) : all;
  });
}

/** Plain text for a card field: decoded, controls removed, whitespace collapsed, capped. */
export function cardText(raw: string | null | undefined, max: number): string {
  if (!raw) return "";
  const s = decodeEntities(raw)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return Array.from(s).slice(0, max).join("");
}

// ---------- URLs ----------

/** `raw` resolved against `base`, when the result is an absolute http(s) URL (Mastodon's valid_url_or_nil). */
export function resolveUrl(raw: string | null | undefined, base: string, sameOriginOnly = false): string | null {
  if (!raw) return null;
  const v = decodeEntities(raw).trim();
  if (!v || v === "null") return null;
  let u: URL;
  try {
    u = new URL(v, base);
  } catch {
    return null;
  }
  if (sameOriginOnly && u.host !== new URL(base).host) return null;
  return httpUrl(u.toString());
}

const httpsUrl = (v: string | null): string | null => (v?.startsWith("https://") ? v : null);

const dimension = (v: unknown): number => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d{1,6}\s*$/.test(v) ? Number(v) : 0;
  return Number.isInteger(n) && n > 0 && n <= MAX_DIMENSION ? n : 0;
};

/** The only HTML a card carries: an iframe written here from a checked https src (Mastodon's player iframe). */
export function playerIframe(src: string, width: number, height: number): string {
  return `<iframe src="${escapeHtml(src)}" width="${width}" height="${height}" allowfullscreen="true" allowtransparency="true" scrolling="no" frameborder="0"></iframe>`;
}

// ---------- parsing ----------

/** The part of a page worth parsing: up to the end of <head> when there is one (the meta tags live there). */
function headOf(body: Uint8Array): Uint8Array {
  // "</head" in ASCII, matched case-insensitively on bytes (the encodings pages use keep ASCII as ASCII).
  const pat = [0x3c, 0x2f, 0x68, 0x65, 0x61, 0x64];
  outer: for (let i = 0; i + pat.length <= body.length; i++) {
    for (let k = 0; k < pat.length; k++) {
      const b = (body[i + k] ?? 0) | (k >= 2 ? 0x20 : 0); // in range: i + pat.length <= body.length
      if (b !== pat[k]) continue outer;
    }
    return body.subarray(0, i);
  }
  return body;
}

/** One HTMLRewriter pass over the page's head. `contentType` carries the charset lol-html decodes with. */
export async function parsePage(body: Uint8Array, contentType: string): Promise<PageDetails> {
  const out: PageDetails = { meta: new Map(), metaByName: new Map(), title: null, lang: null, canonical: null, oembed: null };
  let title: string | null = null;
  let inTitle = false;
  const rewriter = new HTMLRewriter()
    .on("html", {
      element(e) {
        if (out.lang === null) out.lang = e.getAttribute("lang");
      },
    })
    .on("meta", {
      element(e) {
        const content = e.getAttribute("content");
        if (content === null) return;
        const property = e.getAttribute("property");
        const name = e.getAttribute("name");
        for (const key of [property, name]) {
          if (key && !out.meta.has(key.trim())) out.meta.set(key.trim(), decodeEntities(content));
        }
        if (name && !out.metaByName.has(name.trim())) out.metaByName.set(name.trim(), decodeEntities(content));
      },
    })
    .on("link", {
      element(e) {
        const rel = (e.getAttribute("rel") ?? "").toLowerCase();
        const type = (e.getAttribute("type") ?? "").toLowerCase().trim();
        const href = e.getAttribute("href");
        if (!href) return;
        if (rel.split(/\s+/).includes("canonical") && out.canonical === null) out.canonical = href;
        if ((type === "application/json+oembed" || type === "text/json+oembed") && out.oembed === null) out.oembed = href;
      },
    })
    .on("title", {
      element(e) {
        if (title !== null) return;
        title = "";
        inTitle = true;
        e.onEndTag(() => {
          inTitle = false;
        });
      },
      text(t) {
        if (inTitle && title !== null && title.length < 4 * MAX_TITLE) title += t.text;
      },
    });
  const head = headOf(body);
  const transform = async (type: string) => {
    const res = rewriter.transform(new Response(head, { headers: { "content-type": type } }));
    await res.arrayBuffer();
  };
  try {
    await transform(contentType);
  } catch {
    // An encoding lol-html does not know: read it as UTF-8 rather than not at all.
    await transform("text/html; charset=utf-8");
  }
  out.title = title;
  return out;
}

function dateOf(raw: string | null | undefined): number | null {
  if (!raw) return null;
  const t = Date.parse(raw.trim());
  return Number.isFinite(t) ? t : null;
}

/** The card LinkDetailsExtractor would make from the page (`pageUrl`: where the page was finally fetched from). */
export function opengraphCard(page: PageDetails, pageUrl: string): CardFields {
  const og = (k: string) => page.meta.get(k) ?? null;
  const player = httpsUrl(resolveUrl(og("twitter:player"), pageUrl));
  const width = dimension(og(player ? "twitter:player:width" : "og:image:width"));
  const height = dimension(og(player ? "twitter:player:height" : "og:image:height"));
  const site = og("og:site");
  return {
    url: resolveUrl(page.canonical, pageUrl, true) ?? resolveUrl(og("og:url"), pageUrl, true) ?? pageUrl,
    title: cardText(og("og:title") ?? page.title, MAX_TITLE),
    description: cardText(og("og:description") ?? page.metaByName.get("description"), MAX_DESCRIPTION),
    type: player ? "video" : "link",
    linkType: (og("og:type") ?? "").trim().toLowerCase() === "article" ? "article" : "unknown",
    authorName: cardText(og("og:author") ?? og("og:author:username") ?? og("article:author") ?? page.metaByName.get("author"), MAX_NAME),
    authorUrl: "",
    providerName: cardText(og("og:site_name"), MAX_NAME),
    providerUrl: site ? (resolveUrl(/^https?:\/\//i.test(site) ? site : `http://${site}`, pageUrl) ?? "") : "",
    html: player ? playerIframe(player, width, height) : "",
    width,
    height,
    image: resolveUrl(og("og:image") ?? og("og:image:url") ?? og("og:image:secure_url") ?? og("twitter:image"), pageUrl),
    imageDescription: cardText(og("og:image:alt"), MAX_DESCRIPTION),
    embedUrl: resolveUrl(og("twitter:player:stream"), pageUrl) ?? "",
    language: normalizeLanguage(og("og:locale") ?? page.lang),
    publishedAt: dateOf(og("article:published_time")),
  };
}

/** Where the page's oEmbed JSON is, as an absolute URL (https when the page was https, as Mastodon upgrades it). */
export function oembedEndpoint(page: PageDetails, pageUrl: string): string | null {
  const u = resolveUrl(page.oembed, pageUrl);
  if (!u) return null;
  if (pageUrl.startsWith("https://") && u.startsWith("http://")) return `https://${u.slice("http://".length)}`;
  return u;
}

/** The first <iframe> of an oEmbed `html` with an https src, rebuilt; null when there is none. */
async function iframeOf(html: string): Promise<{ src: string; width: number; height: number } | null> {
  let found: { src: string; width: number; height: number } | null = null;
  const rewriter = new HTMLRewriter().on("iframe", {
    element(e) {
      if (found) return;
      const src = httpsUrl(httpUrl(decodeEntities(e.getAttribute("src") ?? "").trim()));
      if (src) found = { src, width: dimension(e.getAttribute("width")), height: dimension(e.getAttribute("height")) };
    },
  });
  await rewriter.transform(new Response(html.slice(0, 64 * 1024), { headers: { "content-type": "text/html; charset=utf-8" } })).arrayBuffer();
  return found;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null);

/**
 * A card from an oEmbed answer (FetchLinkCardForURLService#attempt_oembed), or null when Mastodon would fall back to
 * OpenGraph: not version 1.0 with a type, a `photo` without url, a `video` without a usable iframe, a `rich` one.
 * Relative URLs resolve against the endpoint. `fallback` (the page's OpenGraph card) fills what oEmbed leaves out.
 */
export async function oembedCard(json: unknown, endpoint: string, pageUrl: string, fallback: CardFields | null): Promise<CardFields | null> {
  if (!json || typeof json !== "object" || Array.isArray(json)) return null;
  const o = json as Record<string, unknown>;
  if (str(o.version)?.trim() !== "1.0") return null;
  const type = str(o.type)?.trim();
  if (!type) return null;
  const base: CardFields = {
    url: fallback?.url ?? pageUrl,
    title: cardText(str(o.title), MAX_TITLE) || fallback?.title || "",
    description: fallback?.description ?? "",
    type: "link",
    linkType: fallback?.linkType ?? "unknown",
    authorName: cardText(str(o.author_name), MAX_NAME),
    authorUrl: resolveUrl(str(o.author_url), endpoint) ?? "",
    providerName: cardText(str(o.provider_name), MAX_NAME),
    providerUrl: resolveUrl(str(o.provider_url), endpoint) ?? "",
    html: "",
    width: 0,
    height: 0,
    image: null,
    imageDescription: "",
    embedUrl: "",
    language: fallback?.language ?? null,
    publishedAt: fallback?.publishedAt ?? null,
  };
  switch (type) {
    case "link":
      return { ...base, image: resolveUrl(str(o.thumbnail_url), endpoint) ?? fallback?.image ?? null };
    case "photo": {
      const url = resolveUrl(str(o.url), endpoint);
      if (!url) return null;
      return { ...base, type: "photo", embedUrl: url, image: url, width: dimension(o.width), height: dimension(o.height) };
    }
    case "video": {
      const frame = typeof o.html === "string" ? await iframeOf(o.html) : null;
      if (!frame) return null;
      const width = dimension(o.width) || frame.width;
      const height = dimension(o.height) || frame.height;
      return {
        ...base,
        type: "video",
        width,
        height,
        html: playerIframe(frame.src, width, height),
        image: resolveUrl(str(o.thumbnail_url), endpoint) ?? fallback?.image ?? null,
      };
    }
    default:
      // "rich": most providers rely on <script> tags (Mastodon refuses it the same way).
      return null;
  }
}
