// Preview cards (link previews): the `fetch_card` effect's work, as Mastodon's FetchLinkCardService and
// FetchLinkCardForURLService do it. The first http(s) link of a status that is not a mention, a hashtag or a link to
// this server is fetched through the SSRF guard (net/safe-fetch.ts: public addresses only, ≤3 redirects each
// re-checked, a 15 s deadline, HTML only, at most 1 MB read and only the <head> parsed), its OpenGraph / oEmbed read
// (federation/remote/link-details.ts), and the card stored once per URL and attached to the status. A card is reused for two
// weeks, then refetched when a status links it again. The card image stays a remote URL (no media cache yet).
//
// Mastodon crawls every new status, local or remote, media and polls included, and again after an edit that changed
// the text; it sends no streaming event when the card arrives (clients see it on their next fetch). So does Tern.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { settingStatement } from "../../db/setting-statement";
import { accounts, mentions, statusPreviewCards, statuses } from "../../db/schema";
import type { Config, Env } from "../../env";
import { baseFetchOptions } from "../../federation/remote/fetch-options";
import { type CardFields, oembedCard, oembedEndpoint, opengraphCard, parsePage } from "../../federation/remote/link-details";
import { checkUrl, FetchRefused, safeFetch } from "../../net/safe-fetch";
import { padId, snowflake, unpadId } from "../../lib/text/ids";
import { extractEntities } from "../../lib/text/text";
import { httpUrl } from "../../lib/http/urls";
import { valueList } from "../../db/id-list";
import { deleteStored } from "../../media/store";

/** A stored card is refetched when older than this (FetchLinkCardForURLService: `updated_at <= 2.weeks.ago`). */
export const CARD_REFRESH_MS = 14 * 24 * 3600_000;
const PAGE_MAX_BYTES = 1024 * 1024;
const OEMBED_MAX_BYTES = 256 * 1024;
const PAGE_TIMEOUT_MS = 15_000;
const OEMBED_TIMEOUT_MS = 10_000;
const HTML_TYPES = ["text/html", "application/xhtml+xml"];

const mimeOf = (h: Headers) => ((h.get("content-type") ?? "").split(";")[0] ?? "").trim().toLowerCase(); // split yields at least one element

/** Addressable's normalize, near enough: parsed and re-serialised (host lower case, default port dropped). */
function normalizeUrl(raw: string): string | null {
  const v = httpUrl(raw);
  if (!v) return null;
  try {
    return new URL(v).toString();
  } catch {
    return null;
  }
}

/** Mastodon's bad_url?: no host, not http(s), or a link to this server. */
function usable(raw: string, cfg: Config): string | null {
  const url = normalizeUrl(raw);
  if (!url) return null;
  const u = new URL(url);
  if (!u.hostname || u.host.toLowerCase() === cfg.domain.toLowerCase()) return null;
  return url;
}

/** The card link of a local status: the first URL of its text that is not on this server. */
export function cardUrlOfText(text: string, cfg: Config): string | null {
  for (const e of extractEntities(text)) {
    if (e.kind !== "url") continue;
    const url = usable(e.url, cfg);
    if (url) return url;
  }
  return null;
}

/**
 * The card link of a remote status: the first <a href> of its (sanitised) content that is not a hashtag or a mention
 * (Mastodon's skip_link?: the microformat classes `mention`, `hashtag`, `u-url`, `h-card`, or the href of a mentioned
 * account), not inside a quote's fallback (`.quote-inline`: Mastodon's `:not(.quote-inline) > a`) and not on this
 * server.
 */
export async function cardUrlOfHtml(html: string, cfg: Config, mentionUrls: ReadonlySet<string> = new Set()): Promise<string | null> {
  if (!html.includes("<a")) return null;
  let found: string | null = null;
  let inQuote = 0;
  const rewriter = new HTMLRewriter().on(".quote-inline", {
    element(e) {
      inQuote++;
      e.onEndTag(() => {
        inQuote--;
      });
    },
  });
  rewriter.on("a[href]", {
    element(e) {
      if (found || inQuote > 0) return;
      const cls = (e.getAttribute("class") ?? "").split(/\s+/);
      if (cls.some((c) => c === "mention" || c === "hashtag" || c === "u-url" || c === "h-card")) return;
      if ((e.getAttribute("rel") ?? "").split(/\s+/).includes("tag")) return;
      // The sanitiser wrote this attribute escaped; these are the only references it writes.
      const href = (e.getAttribute("href") ?? "")
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
      if (mentionUrls.has(href)) return;
      found = usable(href, cfg);
    },
  });
  await rewriter.transform(new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } })).arrayBuffer();
  return found;
}

/** Fetches a page and makes its card; null when the page gives none (not HTML, not 200, no title and no player). */
export async function fetchCardFields(cfg: Config, url: string): Promise<CardFields | null> {
  const base = baseFetchOptions(cfg);
  const headers = {
    accept: "text/html",
    "accept-language": "en, *;q=0.5",
    "user-agent": `Tern/0.1 (+${cfg.origin}/) Bot`,
  };
  const isHtml = (status: number, h: Headers) => status === 200 && HTML_TYPES.includes(mimeOf(h));
  const res = await safeFetch(url, { ...base, headers, maxBytes: PAGE_MAX_BYTES, truncate: true, timeoutMs: PAGE_TIMEOUT_MS, wantBody: isHtml });
  if (!isHtml(res.status, res.headers)) return null;
  const page = await parsePage(res.body, res.headers.get("content-type") ?? "text/html");
  const og = opengraphCard(page, res.url);
  const endpoint = oembedEndpoint(page, res.url);
  if (endpoint) {
    try {
      const o = await safeFetch(endpoint, {
        ...base,
        headers: { ...headers, accept: "application/json" },
        maxBytes: OEMBED_MAX_BYTES,
        timeoutMs: OEMBED_TIMEOUT_MS,
      });
      if (o.status === 200) {
        const card = await oembedCard(JSON.parse(o.text()), endpoint, res.url, og);
        if (card) return card;
      }
    } catch (e) {
      if (!(e instanceof FetchRefused) && !(e instanceof SyntaxError)) throw e;
    }
  }
  return og.title || og.html ? og : null;
}

export interface CardOutcome {
  /** The card attached (or already there), or null. */
  cardId: string | null;
  /** Whether a remote page was requested. */
  fetched: boolean;
}

/**
 * The `fetch_card` effect: finds the status's card link, reuses a card fetched in the last two weeks or fetches one,
 * and attaches it (first card wins, as Mastodon's `with_preview_card?` guard). A page that cannot be fetched gives no
 * card and is not retried (Mastodon's LinkCrawlWorker has `retry: 0`); database errors are thrown (the queue retries).
 */
export async function fetchCardForStatus(db: DB, cfg: Config, statusId: string, now = Date.now()): Promise<CardOutcome> {
  const none = { cardId: null, fetched: false };
  const [rows, attached, mentioned] = await db.batch([
    db
      .select({ id: statuses.id, local: statuses.local, text: statuses.text, content: statuses.content, reblogOfId: statuses.reblogOfId })
      .from(statuses)
      .where(eq(statuses.id, statusId))
      .limit(1),
    db.select({ id: statusPreviewCards.previewCardId }).from(statusPreviewCards).where(eq(statusPreviewCards.statusId, statusId)).limit(1),
    db
      .select({ url: accounts.url, uri: accounts.uri })
      .from(mentions)
      .innerJoin(accounts, eq(accounts.id, mentions.accountId))
      .where(eq(mentions.statusId, statusId))
      .limit(100),
  ]);
  const s = rows[0];
  if (!s || s.reblogOfId) return none;
  if (attached[0]) return { cardId: attached[0].id, fetched: false };
  const mentionUrls = new Set(mentioned.flatMap((m) => [m.url, m.uri].filter((x): x is string => !!x)));
  const url = s.local ? cardUrlOfText(s.text, cfg) : await cardUrlOfHtml(s.content, cfg, mentionUrls);
  if (!url) return none;
  try {
    // A link to a private or internal address gets no card and no request (security D1/D2, D10).
    checkUrl(url, baseFetchOptions(cfg));
  } catch (e) {
    if (e instanceof FetchRefused) return none;
    throw e;
  }

  // A card for this URL, stored under it or reached from it before (a status that linked the same URL).
  const [cached] = await db.all<{ id: string; fetched_at: number }>(sql`SELECT id, fetched_at FROM preview_cards WHERE url = ${url}
    UNION ALL SELECT pc.id, pc.fetched_at FROM status_preview_cards spc JOIN preview_cards pc ON pc.id = spc.preview_card_id WHERE spc.url = ${url}
    LIMIT 1`);
  if (cached && cached.fetched_at > now - CARD_REFRESH_MS) {
    await attach(db, statusId, cached.id, url);
    return { cardId: unpadId(cached.id), fetched: false };
  }

  let fields: CardFields | null = null;
  try {
    fields = await fetchCardFields(cfg, url);
  } catch (e) {
    if (!(e instanceof FetchRefused)) throw e;
  }
  if (!fields) {
    // Refetch failed: the card known before stays (as Mastodon's persisted @card).
    if (cached) await attach(db, statusId, cached.id, url);
    return { cardId: cached ? unpadId(cached.id) : null, fetched: true };
  }
  const id = snowflake(now);
  const [, , row] = await db.batch([
    db.run(sql`INSERT INTO preview_cards (id, url, title, description, type, link_type, author_name, author_url, provider_name, provider_url,
        html, width, height, image, image_description, embed_url, language, published_at, created_at, fetched_at)
      VALUES (${padId(id)}, ${fields.url}, ${fields.title}, ${fields.description}, ${fields.type}, ${fields.linkType}, ${fields.authorName},
        ${fields.authorUrl}, ${fields.providerName}, ${fields.providerUrl}, ${fields.html}, ${fields.width}, ${fields.height}, ${fields.image},
        ${fields.imageDescription}, ${fields.embedUrl}, ${fields.language}, ${fields.publishedAt}, ${now}, ${now})
      ON CONFLICT(url) DO UPDATE SET title = excluded.title, description = excluded.description, type = excluded.type,
        link_type = excluded.link_type, author_name = excluded.author_name, author_url = excluded.author_url,
        provider_name = excluded.provider_name, provider_url = excluded.provider_url, html = excluded.html, width = excluded.width,
        height = excluded.height, image = excluded.image,
        image_key = CASE WHEN preview_cards.image IS excluded.image THEN preview_cards.image_key ELSE NULL END, image_description = excluded.image_description, embed_url = excluded.embed_url,
        language = excluded.language, published_at = excluded.published_at, fetched_at = excluded.fetched_at`),
    attachStatement(db, statusId, sql`(SELECT id FROM preview_cards WHERE url = ${fields.url})`, url),
    db.all<{ id: string }>(sql`SELECT id FROM preview_cards WHERE url = ${fields.url}`),
  ]);
  const cardId = (row as { id: string }[])[0]?.id;
  return { cardId: cardId ? unpadId(cardId) : null, fetched: true };
}

/** Links a status to a card unless it has one already, and only while the status exists. */
function attachStatement(db: DB, statusId: string, cardId: ReturnType<typeof sql>, url: string) {
  const ps = padId(statusId);
  return db.run(sql`INSERT OR IGNORE INTO status_preview_cards (status_id, preview_card_id, url)
    SELECT ${ps}, ${cardId}, ${url} WHERE EXISTS (SELECT 1 FROM statuses WHERE id = ${ps}) AND ${cardId} IS NOT NULL`);
}

async function attach(db: DB, statusId: string, paddedCardId: string, url: string) {
  await attachStatement(db, statusId, sql`${paddedCardId}`, url);
}

/** Statement for an edit batch: the status's card goes (the changed text is crawled again). */
export function resetCardStatement(db: DB, statusId: string) {
  return db.run(sql`DELETE FROM status_preview_cards WHERE status_id = ${padId(statusId)}`);
}

/** How far the orphan pass has got: a `preview_cards` rowid (instance_settings; "0" or none: from the start). */
const CARD_PRUNE_CURSOR_KEY = "cron.cards_pruned_after";

/**
 * Cards no status links any more and not fetched for two weeks. Each run (hourly, src/background/cron.ts) looks at the
 * next `limit` cards in rowid order after where the last run stopped, and starts over once it reaches the end: a run
 * reads at most `limit` cards (and their two link lookups) however many old cards statuses still hold, where a scan of
 * the cards past their two weeks read every one of them on every run.
 */
export async function pruneOrphanCards(db: DB, env: Pick<Env, "MEDIA">, at: number, limit = 200): Promise<void> {
  const cutoff = at - CARD_REFRESH_MS;
  const orphan = (table: string) => sql`${sql.raw(table)}.fetched_at < ${cutoff}
    AND NOT EXISTS (SELECT 1 FROM status_preview_cards spc WHERE spc.preview_card_id = ${sql.raw(table)}.id)
    AND NOT EXISTS (SELECT 1 FROM preview_card_trends t WHERE t.preview_card_id = ${sql.raw(table)}.id)`;
  const page = await db.all<{ rowid: number; id: string; orphan: number }>(sql`SELECT pc.rowid AS rowid, pc.id, (${orphan("pc")}) AS orphan
    FROM preview_cards pc
    WHERE pc.rowid > coalesce((SELECT CAST(value AS INTEGER) FROM instance_settings WHERE key = ${CARD_PRUNE_CURSOR_KEY}), 0)
    ORDER BY pc.rowid LIMIT ${limit}`);
  // A short page reached the end: the next run starts over. The orphans are checked again as they go.
  const next = page.length < limit ? 0 : Number(page[page.length - 1]?.rowid ?? 0);
  const gone = page.filter((r) => Number(r.orphan) === 1).map((r) => r.id);
  const cursor = settingStatement(db, CARD_PRUNE_CURSOR_KEY, String(next));
  if (!gone.length) return void (await cursor);
  const [, deleted] = await db.batch([
    cursor,
    db.all<{ image_key: string | null }>(sql`DELETE FROM preview_cards WHERE id IN ${valueList(gone)} AND ${orphan("preview_cards")} RETURNING image_key`),
  ]);
  // Their cached images (card-images.ts) go with them; one left by a failed delete is only storage.
  await deleteStored(
    env,
    deleted.map((d) => d.image_key),
  ).catch((e) => console.error("card images: R2 delete failed", e instanceof Error ? e.message : e));
}
