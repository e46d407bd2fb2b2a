// The `quote-inline` fallback of a quote post: `<p class="quote-inline">RE: <a …>url</a></p>`, the link a reader
// without quote support sees of what is quoted (Mastodon's TextFormatter#add_quote_fallback; Misskey, Pleroma and
// Akkoma write their own). Quote-aware clients hide elements of that class when they show the quote itself. Used for
// Tern's own quote posts (prepended, as Mastodon does, in the API and in the Note: src/entities/statuses/status.ts,
// src/federation/outbound/note-doc.ts) and for legacy quotes received without one (appended:
// src/federation/remote/quote-fallback.ts). Content here is HTML Tern wrote or sanitised: every `<` starts one of its
// tags and every attribute is double-quoted and escaped.
import { renderUrl } from "./text";

const unescapeAttribute = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** Whether `html` already shows the quote: a link to one of `known`, or an element of class `quote-inline`. */
export function showsQuote(html: string, known: readonly string[]): boolean {
  for (const [tag] of html.matchAll(/<[a-z]+\s[^>]*>/g)) {
    const cls = /\sclass="([^"]*)"/.exec(tag)?.[1];
    if (cls?.split(/\s+/).includes("quote-inline")) return true;
    const href = tag.startsWith("<a ") ? /\shref="([^"]*)"/.exec(tag)?.[1] : undefined;
    if (href && known.includes(unescapeAttribute(href))) return true;
  }
  return false;
}

/** The fallback paragraph linking `href`. */
export const quoteInline = (href: string): string => `<p class="quote-inline">RE: ${renderUrl(href)}</p>`;

/**
 * A local quote post's content as Mastodon serves it: the fallback paragraph linking the quoted post's page first,
 * unless the content already links the quoted post (its page or id) or has a fallback of its own.
 */
export function withLocalQuoteFallback(content: string, quoted: { uri: string; url: string | null } | null | undefined): string {
  if (!quoted) return content;
  const href = quoted.url ?? quoted.uri;
  if (showsQuote(content, [quoted.uri, ...(quoted.url ? [quoted.url] : [])])) return content;
  return quoteInline(href) + content;
}
