// Local statuses are plain text: escaped, then linkified (URLs, @mentions, #hashtags) the way Mastodon's formatter
// does. The scanner is hand-written and linear (security G4): no regular expression with nested quantifiers ever
// sees user text, and input is capped before scanning. Every link written is checked (httpUrl, or a path on this
// server): a mention of an account whose stored url is not http(s), or a URL that does not parse, stays text.
import { httpUrl } from "../http/urls";
import { lazy } from "../limits/lazy";

export const MAX_SOURCE_CHARS = 20_000;
export const URL_LENGTH = 23;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"));
}

export type Entity =
  | { kind: "url"; start: number; end: number; url: string }
  | { kind: "mention"; start: number; end: number; username: string; domain: string | null }
  | { kind: "hashtag"; start: number; end: number; name: string };

const isUserChar = (c: string) => /[A-Za-z0-9_]/.test(c);
const isDomainChar = (c: string) => /[\p{L}\p{N}.-]/u.test(c);
const isTagChar = (c: string) => /[\p{L}\p{N}\p{M}_·]/u.test(c);
const isWordChar = (c: string) => /[\p{L}\p{N}_]/u.test(c);
const URL_STOP = /[\s<>"]/;
const TRAILING_PUNCT = /[.,:;!?'")\]}]/;

/** Finds URLs, mentions and hashtags in one left-to-right pass. */
export function extractEntities(text: string): Entity[] {
  const out: Entity[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ch = text[i];
    const prev = text.charAt(i - 1); // "" at the start
    if ((ch === "h" || ch === "H") && (prev === "" || !isWordChar(prev))) {
      const head = text.slice(i, i + 8).toLowerCase();
      const schemeLen = head.startsWith("https://") ? 8 : head.startsWith("http://") ? 7 : 0;
      if (schemeLen) {
        let j = i + schemeLen;
        while (j < n && !URL_STOP.test(text.charAt(j))) j++;
        let end = j;
        // Trailing punctuation is not part of the URL, except a ')' that closes a '(' inside it.
        while (end > i + schemeLen && TRAILING_PUNCT.test(text.charAt(end - 1))) {
          if (text[end - 1] === ")" && text.slice(i, end).split("(").length > text.slice(i, end).split(")").length - 1) break;
          end--;
        }
        if (end > i + schemeLen) {
          out.push({ kind: "url", start: i, end, url: text.slice(i, end) });
          i = end;
          continue;
        }
      }
    }
    if (ch === "@" && (prev === "" || !(isWordChar(prev) || prev === "/" || prev === "@"))) {
      let j = i + 1;
      while (j < n && (isUserChar(text.charAt(j)) || text[j] === "." || text[j] === "-")) j++;
      let userEnd = j;
      while (userEnd > i + 1 && !isUserChar(text.charAt(userEnd - 1))) userEnd--;
      const username = text.slice(i + 1, userEnd);
      if (username && /^[A-Za-z0-9_]/.test(username)) {
        let end = userEnd;
        let domain: string | null = null;
        if (text[userEnd] === "@") {
          let k = userEnd + 1;
          while (k < n && isDomainChar(text.charAt(k))) k++;
          let dEnd = k;
          while (dEnd > userEnd + 1 && (text[dEnd - 1] === "." || text[dEnd - 1] === "-")) dEnd--;
          const d = text.slice(userEnd + 1, dEnd);
          if (d.includes(".") || /^localhost$/i.test(d)) {
            domain = d;
            end = dEnd;
            if (text[end] === ":" && /\d/.test(text[end + 1] ?? "")) {
              // host:port (local development)
              let p = end + 1;
              while (p < n && /\d/.test(text.charAt(p))) p++;
              domain = text.slice(userEnd + 1, p);
              end = p;
            }
          }
        }
        out.push({ kind: "mention", start: i, end, username, domain });
        i = end;
        continue;
      }
    }
    if ((ch === "#" || ch === "＃") && (prev === "" || !(isWordChar(prev) || prev === "/" || prev === ")" || prev === "&"))) {
      let j = i + 1;
      while (j < n && isTagChar(text.charAt(j))) j++;
      const name = text.slice(i + 1, j);
      if (name && !/^[\d_·]+$/.test(name) && name.length <= 100) {
        out.push({ kind: "hashtag", start: i, end: j, name });
        i = j;
        continue;
      }
      i = Math.max(j, i + 1);
      continue;
    }
    i++;
  }
  return out;
}

// Made on first use: building a grapheme segmenter loads ICU's break rules, ~7 ms that would otherwise be spent in
// the Worker's startup (bench/startup.mjs) by every isolate, also those that never count a status's length.
const graphemeSegmenter = lazy(() => (typeof Intl !== "undefined" && "Segmenter" in Intl ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null));

export function graphemeLength(s: string): number {
  if (!s) return 0;
  const segmenter = graphemeSegmenter();
  if (!segmenter) return Array.from(s).length;
  let count = 0;
  for (const _ of segmenter.segment(s)) count++;
  return count;
}

/** Mastodon's status length: graphemes, every URL counts 23, a remote mention counts as its @username only. */
export function statusLength(text: string, spoiler = ""): number {
  let total = graphemeLength(spoiler);
  let last = 0;
  for (const e of extractEntities(text)) {
    total += graphemeLength(text.slice(last, e.start));
    if (e.kind === "url") total += URL_LENGTH;
    else if (e.kind === "mention") total += graphemeLength(`@${e.username}`);
    else total += graphemeLength(text.slice(e.start, e.end));
    last = e.end;
  }
  total += graphemeLength(text.slice(last));
  return total;
}

/** Hashtag normalisation like Mastodon's HashtagNormalizer: NFKC, lower case, ASCII folding of Latin letters. */
export function normalizeTag(name: string): string {
  return name
    .normalize("NFKC")
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .normalize("NFC")
    .replace(/[^\p{L}\p{N}\p{M}_·]/gu, "");
}

export interface RenderLinks {
  /** The resolved account for a mention (by entity), or null to leave it as text. */
  mention(e: Extract<Entity, { kind: "mention" }>): { url: string; username: string } | null;
  tagUrl(name: string): string;
}

/** A link target we write: an absolute http(s) URL (httpUrl), or a path on this server; null otherwise. */
function linkTarget(url: string): string | null {
  return httpUrl(url) ?? (/^\/(?![/\\])/.test(url) && !/[\u0000-\u0020\u007f]/.test(url) ? url : null);
}

/** A URL as Mastodon's TextFormatter links it: the scheme and `www.` hidden, the rest cut at 30 characters. */
export function renderUrl(url: string): string {
  if (!httpUrl(url)) return escapeHtml(url);
  const href = escapeHtml(url);
  const m = /^(https?:\/\/(?:www\.)?)(.*)$/i.exec(url)!;
  const prefix = m[1] ?? ""; // both groups always participate
  const rest = m[2] ?? "";
  const display = rest.length > 30 ? rest.slice(0, 30) : rest;
  const tail = rest.length > 30 ? rest.slice(30) : "";
  const cls = tail ? "ellipsis" : "";
  return (
    `<a href="${href}" target="_blank" rel="nofollow noopener noreferrer" translate="no">` +
    `<span class="invisible">${escapeHtml(prefix)}</span><span class="${cls}">${escapeHtml(display)}</span>` +
    `<span class="invisible">${escapeHtml(tail)}</span></a>`
  );
}

function renderInline(text: string, links: RenderLinks): string {
  let html = "";
  let last = 0;
  for (const e of extractEntities(text)) {
    html += escapeHtml(text.slice(last, e.start));
    const raw = text.slice(e.start, e.end);
    if (e.kind === "url") html += renderUrl(e.url);
    else if (e.kind === "mention") {
      const acc = links.mention(e);
      const href = acc ? linkTarget(acc.url) : null;
      html +=
        acc && href
          ? `<span class="h-card" translate="no"><a href="${escapeHtml(href)}" class="u-url mention">@<span>${escapeHtml(acc.username)}</span></a></span>`
          : escapeHtml(raw);
    } else {
      const href = linkTarget(links.tagUrl(normalizeTag(e.name)));
      html += href ? `<a href="${escapeHtml(href)}" class="mention hashtag" rel="tag">#<span>${escapeHtml(e.name)}</span></a>` : escapeHtml(raw);
    }
    last = e.end;
  }
  return html + escapeHtml(text.slice(last));
}

/** Plain text → Mastodon-shaped HTML: paragraphs on blank lines, <br /> on single newlines. */
export function renderPlainText(text: string, links: RenderLinks): string {
  const normalized = text.replace(/\r\n?/g, "\n").trim();
  if (!normalized) return "";
  return normalized
    .split(/\n{2,}/)
    .map(
      (para) =>
        `<p>${para
          .split("\n")
          .map((line) => renderInline(line, links))
          .join("<br />")}</p>`,
    )
    .join("");
}

/**
 * Text for a profile note or field: same rendering, mentions left as text, hashtags linked to this server's tag page
 * by absolute URL (`origin`: scheme://host), as Mastodon writes them: the HTML is federated, and a relative link would
 * point at the reader's server.
 */
export const profileLinks = (origin: string): RenderLinks => ({ mention: () => null, tagUrl: (n) => `${origin}/tags/${encodeURIComponent(n)}` });

/**
 * A local profile's HTML with the links our renderer wrote relative to this server (`href="/tags/…"`, stored by
 * versions before profileLinks) made absolute. Only an attribute our renderer writes is touched: `href="/` followed by
 * a path that is not protocol-relative.
 */
export const absoluteProfileLinks = (html: string, origin: string): string => html.replace(/href="\/(?![/\\])/g, `href="${origin}/`);

/** The hashtags of profile texts (note source and field values), normalised and each once, in order of appearance. */
export function profileHashtags(texts: string[]): string[] {
  const seen = new Set<string>();
  for (const t of texts) for (const e of extractEntities(t)) if (e.kind === "hashtag") seen.add(normalizeTag(e.name));
  return [...seen].filter((n) => n !== "");
}

/** Strips characters that must never be stored: NUL and lone surrogates (security A14). */
export function cleanText(s: string): string {
  return s.replace(/\u0000/g, "").replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/**
 * A language tag as statuses, cards and trends keep it: its primary subtag, lower case (`en` of `en-GB`, `pt_BR` →
 * `pt`, `zh-Hant-TW` → `zh`), as Mastodon's valid_locale_or_nil takes the part before the first `-` or `_`; null when
 * it is no language tag.
 */
export function normalizeLanguage(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const m = /^\s*([a-zA-Z]{2,3})(?:[-_][a-zA-Z0-9]{1,8})*\s*$/.exec(raw);
  return m?.[1]?.toLowerCase() ?? null;
}
