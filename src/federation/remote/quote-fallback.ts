// The link a legacy quote leaves its readers. A Note quoting with `_misskey_quote`, `quoteUrl` or `quoteUri` alone
// (Misskey, Pleroma, Akkoma, Hollo before 0.9) is never shown as a quote unless it quotes its own author (Mastodon 4.5's
// Quote#acceptable?: such servers send no QuoteRequest, so the quoted author never approved it); Mastodon then shows
// whatever fallback the sender wrote into the content (the `quote-inline` "RE:" link Pleroma and Akkoma add, Misskey's
// "RE: <url>"). Hollo writes none, so its readers there see nothing of what is quoted. Here a content that links the
// quoted post nowhere gets Mastodon's own fallback paragraph, `<p class="quote-inline">RE: <a …>url</a></p>`, appended
// after the sender's text (as Pleroma and Akkoma append theirs), at ingestion and again on each Update.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { StatusRow } from "../../entities/statuses/status";
import { httpUrl } from "../../lib/http/urls";
import { padId } from "../../lib/text/ids";
import { quoteInline, showsQuote } from "../../lib/text/quote-inline";
import type { NormalizedNote } from "./normalize";

/** The URL the fallback links to, and every URL of the quoted post that already counts as a link to it. */
export interface QuoteFallback {
  href: string;
  known: string[];
}

/**
 * The fallback a quote needs when it will not be shown as one (legacy and not accepted): a link to the quoted status's
 * page (its `url`, else its id), or to the quoted IRI when that status could not be resolved. Null otherwise.
 */
export function quoteFallbackFor(
  q: { legacy: boolean; state: string; uri: string | null },
  quoted: Pick<StatusRow, "uri" | "url"> | null,
): QuoteFallback | null {
  if (!q.legacy || q.state === "accepted") return null;
  const known = [q.uri, quoted?.uri, quoted?.url].map(httpUrl).filter((u): u is string => !!u);
  const href = (quoted && (httpUrl(quoted.url) ?? httpUrl(quoted.uri))) || known[0];
  return href ? { href, known: [...new Set(known)] } : null;
}

/** The stored quote of status `statusId`, with its quoted status's id and page (for an Update, in its read batch). */
export function storedQuoteQuery(db: DB, statusId: string) {
  return db.all<{ legacy: number; state: string; uri: string | null; url: string | null }>(
    sql`SELECT q.legacy, q.state, s.uri, s.url FROM quotes q LEFT JOIN statuses s ON s.id = q.quoted_status_id
      WHERE q.status_id = ${padId(statusId)} LIMIT 1`,
  );
}

/** The fallback an updated Note's content needs, from its stored quote (none: no fallback) and the Note's quote IRI. */
export function storedQuoteFallback(rows: unknown[] | undefined, note: NormalizedNote): QuoteFallback | null {
  const row = rows?.[0] as { legacy: number; state: string; uri: string | null; url: string | null } | undefined;
  if (!row) return null;
  const quoted = row.uri ? { uri: row.uri, url: row.url } : null;
  return quoteFallbackFor({ legacy: !!row.legacy, state: row.state, uri: note.quote?.uri ?? null }, quoted);
}

/** Sanitised content with the quote fallback appended when `fallback` is given and the content does not show the quote. */
export function withQuoteFallback(content: string, fallback: QuoteFallback | null | undefined): string {
  if (!fallback || showsQuote(content, fallback.known)) return content;
  return content + quoteInline(fallback.href);
}
