// Statuses → Mastodon Status JSON, in batches: whatever the page size, ONE D1 batch (one round trip) loads the
// statuses, their reblog targets and the statuses they quote, with authors, media, mentions, tags, polls, applications,
// cards, emojis, quotes and the viewer's relations. Each status row carries those as correlated subqueries on its own
// keys (statusRowsStatement: an index seek that finds nothing reads no row in D1's count), so a page costs about one
// row read per id bound, per row found and per author, not one statement per relation re-reading the page's ids. The
// page's ids are bound as plain parameters (`IN (?, ?, …)`; one JSON parameter above PLAIN_PARAMS). The reblog targets
// and quoted statuses come from the page's query when it read them (`related`: home, lists, public, tags, account
// statuses, notifications), else from the ids in SQL. The same batch loads the viewer's active content filters; they
// are compiled once and matched in memory (`filtered`).
import { type MastodonCollection, renderCollectionRow } from "../accounts/collection";
import { collectionsLinked, type LinkedCollections } from "../../queries/accounts/collections";
import { type Column, getTableColumns, sql, type SQL, type Table } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { DB, Statement } from "../../db/client";
import { idList } from "../../db/client";
import { bindTextWith, boundText } from "../../db/bound-sql";
import { ACCOUNT_UNRENDERED, accounts, mediaAttachments, polls, previewCards, quotes, statuses, type FilterContext } from "../../db/schema/index";
import type { Config } from "../../env";
import { padId, unpadId } from "../../lib/text/ids";
import type { QuoteRow, RenderAccountRow } from "../../db/schema/index";
import { QUOTE_FLAGS, quoteShown, renderQuote, renderQuoteApproval, type MastodonQuote, type MastodonQuoteApproval, type MastodonShallowQuote } from "./quote";
import { acctOf, renderAccount, type MastodonAccount } from "../accounts/account";
import { renderMedia, type MastodonMediaAttachment } from "./media";
import { renderPoll, type MastodonPoll } from "./poll";
import { renderPreviewCard, type MastodonPreviewCard, type PreviewCardRow } from "./preview-card";
import { renderEmojis, type MastodonCustomEmoji } from "../instance/custom-emoji";
import type { StoredEmoji } from "../../db/schema/index";
import { isoTime, statusUrl, tagUrl } from "../urls";
import { withLocalQuoteFallback } from "../../lib/text/quote-inline";
import { canSeeStatus } from "../../policy/visibility";
import { activeFilterRules, compileFilters, matchFilters, searchableText, type CompiledFilter, type FilterMatch } from "../../policy/filter-match";
import { renderFilterResults, type MastodonFilterResult } from "./filter-result";
import type { Visibility } from "../../db/schema/index";

/** Status::Mention: an account the status mentions (silent mentions are not listed). */
export interface MastodonStatusMention {
  id: string;
  username: string;
  url: string;
  acct: string;
}

/** Status::Tag: a hashtag the status uses, by name (no id or history, unlike the Tag entity). */
export interface MastodonStatusTag {
  name: string;
  url: string;
}

/** Status `application`: the app a local status was posted from ("Web" when none is known). */
export interface MastodonStatusApplication {
  name: string;
  website: string | null;
}

/**
 * Status (docs.joinmastodon.org/entities/Status). A boost has empty content, no url, card, quote or emojis of its own:
 * `reblog` holds the boosted status. The viewer's fields (favourited ... filtered) are present only with a viewer;
 * `pinned` only on the viewer's own statuses; `application` only on local statuses.
 */
export interface MastodonStatus {
  id: string;
  created_at: string;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  sensitive: boolean;
  spoiler_text: string;
  visibility: Visibility;
  language: string | null;
  uri: string;
  url: string | null;
  replies_count: number;
  reblogs_count: number;
  favourites_count: number;
  quotes_count: number;
  edited_at: string | null;
  content: string;
  reblog: MastodonStatus | null;
  application?: MastodonStatusApplication;
  account: MastodonAccount;
  media_attachments: MastodonMediaAttachment[];
  mentions: MastodonStatusMention[];
  tags: MastodonStatusTag[];
  emojis: MastodonCustomEmoji[];
  card: MastodonPreviewCard | null;
  poll: MastodonPoll | null;
  /** The quoted status in full; inside a quote, a ShallowQuote (Mastodon's ShallowStatusSerializer). */
  quote: MastodonQuote<MastodonStatus> | MastodonShallowQuote | null;
  quote_approval: MastodonQuoteApproval;
  /** Mastodon 4.6: the collections the status links to, as far as this server knows them. */
  tagged_collections: MastodonCollection[];
  /** The source text: only in the answer to a delete (renderDeletedStatus), for a redraft. */
  text?: string;
  favourited?: boolean;
  reblogged?: boolean;
  muted?: boolean;
  bookmarked?: boolean;
  pinned?: boolean;
  filtered?: MastodonFilterResult[];
}

export type StatusRow = typeof statuses.$inferSelect;

/** The fields every new status row starts with: no replies, boosts or favourites yet, never edited. */
export const newStatusFields = (createdAt: number, now = createdAt) =>
  ({ repliesCount: 0, reblogsCount: 0, favouritesCount: 0, quotesCount: 0, quoteApprovalPolicy: 0, createdAt, editedAt: null, updatedAt: now }) as const;
export type MediaRow = typeof mediaAttachments.$inferSelect;
export type PollRow = typeof polls.$inferSelect;

export interface StatusBundle {
  statuses: Map<string, StatusRow>;
  accounts: Map<string, RenderAccountRow>;
  media: Map<string, MediaRow[]>;
  mentions: Map<string, RenderAccountRow[]>;
  mentionIds: Map<string, Set<string>>;
  tags: Map<string, string[]>;
  polls: Map<string, PollRow>;
  ownVotes: Map<string, number[]>;
  apps: Map<string, { name: string; website: string | null }>;
  /** Each status's preview card, with the link as the status wrote it. */
  cards: Map<string, { card: PreviewCardRow; url: string }>;
  /** The custom emojis each status's text and content warning use (of its author's domain; local ones for local). */
  emojis: Map<string, StoredEmoji[]>;
  /** Each quoting status's quote row (src/entities/statuses/quote.ts); the quoted statuses are loaded with the page. */
  quotes: Map<string, QuoteRow>;
  /** The viewer's active filters, compiled; null when not loaded (no viewer, or a bundle built without a read). */
  filters: CompiledFilter[] | null;
  /** The rows of the caller's own statement run in the bundle's batch (loadStatusBundle's `own`), if any. */
  extra?: unknown[];
  /** The collections the statuses' links name (Status `tagged_collections`), when some link looks like one. */
  collections?: LinkedCollections;
  viewer: {
    id: string | null;
    favourited: Set<string>;
    reblogged: Set<string>;
    bookmarked: Set<string>;
    pinned: Set<string>;
    mutedConversations: Set<string>;
    following: Set<string>;
    blockedBy: Set<string>;
    /** Among the loaded authors: those the viewer blocks or mutes, and the viewer's blocked domains (quote states). */
    blocking: Set<string>;
    muting: Set<string>;
    blockedDomains: Set<string>;
  };
}

/**
 * Ids as an `IN` operand: plain bound parameters for a page (`IN (?, ?, …)`: SQLite walks the list once, one row read
 * per value), one JSON parameter above PLAIN_IDS (D1 allows 100 bound parameters per statement; json_each reads each
 * value twice).
 */
const PLAIN_PARAMS = 80;
/** `uses`: how many times the statement binds this list (the rest of the 100 goes to the viewer's and other values). */
function inIds(ids: readonly string[], uses = 1): SQL {
  if (ids.length * uses > PLAIN_PARAMS) return idList(ids);
  return sql`(${sql.join(
    ids.map((id) => sql`${padId(id)}`),
    sql`, `,
  )})`;
}

/** The page's reblog targets and the statuses they and the page quote (one level), found from the page's ids. */
function relatedOf(ids: readonly string[], uses = 3): SQL {
  const page = inIds(ids, uses);
  const reblogs = sql`(SELECT r.reblog_of_id FROM statuses r WHERE r.id IN ${page} AND r.reblog_of_id IS NOT NULL)`;
  return sql`("statuses"."id" IN ${reblogs} OR "statuses"."id" IN (SELECT q.quoted_status_id FROM quotes q
    WHERE q.quoted_status_id IS NOT NULL AND (q.status_id IN ${page} OR q.status_id IN ${reblogs})))`;
}

/**
 * How a bundle carries the rows of one table it joins: the columns it reads (all but `omit`), in one fixed order.
 * Made once per table, on first use (below).
 */
interface RowShape<T> {
  cols: [string, Column][];
  /** Only for typing decodeRow's result. */
  row?: T;
}

function rowShape<T>(table: Table, omit: readonly string[] = []): RowShape<T> {
  const cols = Object.entries(getTableColumns(table)).filter(([k]) => !omit.includes(k));
  // SQLite's functions take at most 127 arguments; every table read this way is far narrower.
  if (cols.length > 100) throw new Error("rowShape: too many columns for one json_array");
  return { cols };
}

const AUTHOR = lazy(() => rowShape<RenderAccountRow>(accounts, ACCOUNT_UNRENDERED));
const MEDIA = lazy(() => rowShape<MediaRow>(mediaAttachments));
const POLL = lazy(() => rowShape<PollRow>(polls));
const CARD = lazy(() => rowShape<PreviewCardRow>(previewCards));
const QUOTE = lazy(() => rowShape<QuoteRow>(quotes));

/**
 * `json_array(alias."column", …)` over a shape's columns, so a row read in a correlated subquery decodes like drizzle's
 * own (`decodeRow`, by position). An array, not an object keyed by property names: the keys (~520 bytes an account)
 * were a quarter to a half of each row's JSON, which SQLite builds, D1 sends escaped inside its own JSON, and the
 * Worker parses twice.
 */
function jsonRow(shape: RowShape<unknown>, alias: string): string {
  return `json_array(${shape.cols.map(([, c]) => `${alias}."${c.name}"`).join(", ")})`;
}

function decodeRow<T>(shape: RowShape<T>, values: unknown): T {
  const row = values as unknown[];
  const out: Record<string, unknown> = {};
  const cols = shape.cols;
  // Indexed loops here and in decodeStatus: every row of a page passes through them, and an iterator per row is garbage.
  for (let i = 0; i < cols.length; i++) {
    const [k, c] = cols[i]!;
    const v = row[i];
    out[k] = v == null ? null : c.mapFromDriverValue(v);
  }
  return out as T;
}

/** A JSON value the statement built in SQLite (an object, or a row jsonRow wrote), or null. */
const parseJson = <T>(v: string | null): T | null => (v ? (JSON.parse(v) as T) : null);
const parseList = (v: string | null): unknown[] => parseJson<unknown[]>(v) ?? [];

/** The status row's own columns: each is selected `AS` its property name and decoded as drizzle would. */
const STATUS_COLUMNS = lazy(() => Object.entries(getTableColumns(statuses)));

/**
 * The status statement's `SELECT … FROM statuses` (below), without and with a viewer: ~7 KB of text made once per
 * isolate, the viewer's values bound as `$v` and `$now`. Drizzle would otherwise build it again on every call from a
 * few hundred pieces, and map each row twice (D1's objects to arrays, then to properties): most of a page's
 * query-building time and garbage. Here D1's row objects come back keyed by property already (`AS "accountId"`).
 */
const STATUS_HEAD = lazy(() => boundText(`${statusHead(false)} WHERE $where`));
const STATUS_HEAD_VIEWER = lazy(() => boundText(`${statusHead(true)} WHERE $where`));

function statusHead(viewer: boolean): string {
  const S = `"statuses"`;
  const cols = STATUS_COLUMNS().map(([k, c]) => `${S}."${c.name}" AS "${k}"`);
  const own = [
    `(SELECT ${jsonRow(AUTHOR(), "xa")} FROM accounts xa WHERE xa.id = ${S}.account_id) AS "xAuthor"`,
    `(SELECT json_group_array(${jsonRow(MEDIA(), "xm")}) FROM media_attachments xm WHERE xm.status_id = ${S}.id) AS "xMedia"`,
    `(SELECT json_group_array(json_object('silent', xn.silent, 'account', ${jsonRow(AUTHOR(), "xna")}))
      FROM mentions xn JOIN accounts xna ON xna.id = xn.account_id WHERE xn.status_id = ${S}.id) AS "xMentions"`,
    `(SELECT json_group_array(xt.name) FROM status_tags xst JOIN tags xt ON xt.id = xst.tag_id WHERE xst.status_id = ${S}.id) AS "xTags"`,
    `(SELECT ${jsonRow(POLL(), "xp")} FROM polls xp WHERE xp.status_id = ${S}.id) AS "xPoll"`,
    `(SELECT json_object('id', xo.id, 'name', xo.name, 'website', xo.website) FROM oauth_applications xo
      WHERE ${S}.local = 1 AND xo.id = ${S}.application_id) AS "xApp"`,
    // The card's own `url` and the link's (as the status wrote it) are both kept.
    `(SELECT json_object('originalUrl', xsc.url, 'card', ${jsonRow(CARD(), "xpc")})
      FROM status_preview_cards xsc JOIN preview_cards xpc ON xpc.id = xsc.preview_card_id WHERE xsc.status_id = ${S}.id) AS "xCard"`,
    // The custom emojis its text uses (statusEmojisStatement's rows, in the order written).
    `CASE WHEN ${S}.emoji_shortcodes IS NOT NULL THEN (SELECT json_group_array(json_object('id', e.id, 'shortcode', e.shortcode,
        'image_key', e.image_key, 'image_remote_url', e.image_remote_url, 'visible_in_picker', e.visible_in_picker, 'uri', e.uri))
      FROM (SELECT xe.* FROM json_each(${S}.emoji_shortcodes) xj JOIN custom_emojis xe ON xe.shortcode = xj.value
        AND xe.domain IS (SELECT xea.domain FROM accounts xea WHERE xea.id = ${S}.account_id) AND xe.disabled = 0 ORDER BY xj.key) e) END AS "xEmojis"`,
    `(SELECT ${jsonRow(QUOTE(), "xq")} FROM quotes xq WHERE xq.status_id = ${S}.id) AS "xQuote"`,
  ];
  const mine = [
    `EXISTS (SELECT 1 FROM favourites WHERE account_id = $v AND status_id = ${S}.id) AS "xFav"`,
    `EXISTS (SELECT 1 FROM statuses xr WHERE xr.reblog_of_id = ${S}.id AND xr.account_id = $v) AS "xReb"`,
    `EXISTS (SELECT 1 FROM bookmarks WHERE account_id = $v AND status_id = ${S}.id) AS "xBm"`,
    `EXISTS (SELECT 1 FROM status_pins WHERE account_id = $v AND status_id = ${S}.id) AS "xPin"`,
    `EXISTS (SELECT 1 FROM conversation_mutes WHERE account_id = $v AND conversation_id = ${S}.conversation_id) AS "xCm"`,
    `CASE WHEN ${S}.poll_id IS NOT NULL THEN (SELECT json_group_array(choice) FROM poll_votes
      WHERE poll_id = ${S}.poll_id AND account_id = $v) END AS "xVotes"`,
    // Whether the viewer follows the author matters for a private status (canSeeStatus) and for a quote policy that
    // names followers (quotePolicyFor: 4 in either half); elsewhere it is not looked up.
    `CASE WHEN ${S}.visibility = 'private' OR (${S}.quote_approval_policy & ${FOLLOWERS_POLICY}) <> 0
      THEN EXISTS (SELECT 1 FROM follows WHERE account_id = $v AND target_account_id = ${S}.account_id) ELSE 0 END AS "xFollowing"`,
    `EXISTS (SELECT 1 FROM blocks WHERE account_id = ${S}.account_id AND target_account_id = $v) AS "xBlockedBy"`,
    `EXISTS (SELECT 1 FROM blocks WHERE account_id = $v AND target_account_id = ${S}.account_id) AS "xBlocking"`,
    `EXISTS (SELECT 1 FROM mutes WHERE account_id = $v AND target_account_id = ${S}.account_id
      AND (expires_at IS NULL OR expires_at > $now)) AS "xMuting"`,
  ];
  return `SELECT ${[...cols, ...own, ...(viewer ? mine : [])].join(", ")} FROM statuses`;
}

/**
 * One statement for a set of statuses: each row with, through correlated lookups on its own keys (an index seek that
 * finds nothing reads no row), its author, media, mentions, tags, poll, application, card, emojis and quote, and the
 * viewer's relations to it and to its author. Rows read: one per id bound, one per row found.
 */
function statusRowsStatement(db: DB, where: SQL, viewerId: string | null, now: number) {
  const q = viewerId ? bindTextWith(db, STATUS_HEAD_VIEWER(), { v: padId(viewerId), now }, { where }) : bindTextWith(db, STATUS_HEAD(), {}, { where });
  return db.all<LoadedRow>(q);
}

/** QUOTE_FLAGS.followers in the automatic (high) and manual (low) halves of quote_approval_policy. */
const FOLLOWERS_POLICY = (QUOTE_FLAGS.followers << 16) | QUOTE_FLAGS.followers;

/** A row as D1 returns it: the status's columns by property name, not yet decoded (decodeStatus), and the rest. */
type LoadedRow = Record<keyof StatusRow, unknown> & {
  xAuthor: string | null;
  xMedia: string | null;
  xMentions: string | null;
  xTags: string | null;
  xPoll: string | null;
  xApp: string | null;
  xCard: string | null;
  xEmojis: string | null;
  xQuote: string | null;
  xFav?: number;
  xReb?: number;
  xBm?: number;
  xPin?: number;
  xCm?: number;
  xVotes?: string | null;
  xFollowing?: number;
  xBlockedBy?: number;
  xBlocking?: number;
  xMuting?: number;
};

/** The status row's columns decoded in place as drizzle's select would (ids unpadded, booleans, JSON). */
function decodeStatus(raw: Record<string, unknown>): StatusRow {
  const cols = STATUS_COLUMNS();
  for (let i = 0; i < cols.length; i++) {
    const [k, c] = cols[i]!;
    const v = raw[k];
    raw[k] = v == null ? null : c.mapFromDriverValue(v);
  }
  return raw as StatusRow;
}

/** A bundle with nothing loaded yet (also used to render a status just written, without reading it back). */
export function emptyBundle(viewerId: string | null): StatusBundle {
  return {
    statuses: new Map(),
    accounts: new Map(),
    media: new Map(),
    mentions: new Map(),
    mentionIds: new Map(),
    tags: new Map(),
    polls: new Map(),
    ownVotes: new Map(),
    apps: new Map(),
    cards: new Map(),
    emojis: new Map(),
    quotes: new Map(),
    filters: null,
    viewer: {
      id: viewerId,
      favourited: new Set(),
      reblogged: new Set(),
      bookmarked: new Set(),
      pinned: new Set(),
      mutedConversations: new Set(),
      following: new Set(),
      blockedBy: new Set(),
      blocking: new Set(),
      muting: new Set(),
      blockedDomains: new Set(),
    },
  };
}

/**
 * Loads `ids` (the page), their reblog targets and the statuses they quote, in ONE batch. `related`, when the page's
 * query already found them (home_feed.reblog_of_id, quotes.quoted_status_id), lists those other statuses: complete,
 * it saves re-deriving them from the page's ids. `own`: a statement of the caller's to run in the same batch (its rows
 * in `extra`).
 */
export async function loadStatusBundle(db: DB, ids: string[], viewerId: string | null, related?: readonly string[], own?: Statement): Promise<StatusBundle> {
  if (ids.length === 0) return emptyBundle(viewerId);
  const read = statusBundleRead(db, ids, viewerId, related, own);
  return read.bundle((await db.batch(read.stmts as unknown as [Statement])) as unknown[]);
}

/**
 * loadStatusBundle as its batch's statements (non-empty `ids`), to run in a batch of the caller's, and what makes the
 * bundle of their results (`bundle`, given exactly those statements' results).
 */
export function statusBundleRead(
  db: DB,
  ids: string[],
  viewerId: string | null,
  related?: readonly string[],
  own?: Statement,
): { stmts: Statement[]; bundle: (res: readonly unknown[]) => Promise<StatusBundle> } {
  const now = Date.now();
  const page = [...new Set(ids)];
  const extra = related ? [...new Set(related)].filter((id) => !page.includes(id)) : null;
  const rowsQ = [statusRowsStatement(db, sql`"statuses"."id" IN ${inIds(page)}`, viewerId, now)];
  if (!extra) rowsQ.push(statusRowsStatement(db, relatedOf(page), viewerId, now));
  else if (extra.length) rowsQ.push(statusRowsStatement(db, sql`"statuses"."id" IN ${inIds(extra)}`, viewerId, now));
  const v = viewerId ?? "0";
  const all = extra
    ? inIds([...page, ...extra])
    : sql`(SELECT "statuses"."id" FROM statuses WHERE "statuses"."id" IN ${inIds(page, 4)} OR ${relatedOf(page, 4)})`;
  const viewerQ = [
    activeFilterRules(db, v, all, now),
    // The viewer's blocked domains, for the states of quotes (blocked_domain).
    db.all<{ domain: string }>(sql`SELECT domain FROM account_domain_blocks WHERE account_id = ${padId(v)}`),
  ] as const;
  const stmts: Statement[] = [...rowsQ, ...(viewerId ? viewerQ : []), ...(own ? [own] : [])];
  return { stmts, bundle: (res) => bundleOf(db, res, viewerId, rowsQ.length, !!own) };
}

async function bundleOf(db: DB, res: readonly unknown[], viewerId: string | null, rowsQs: number, own: boolean): Promise<StatusBundle> {
  const bundle = emptyBundle(viewerId);
  if (own) bundle.extra = res[res.length - 1] as unknown[];
  const vw = bundle.viewer;
  for (const r of res.slice(0, rowsQs) as LoadedRow[][]) {
    for (const row of r) {
      const {
        xAuthor,
        xMedia,
        xMentions,
        xTags,
        xPoll,
        xApp,
        xCard,
        xEmojis,
        xQuote,
        xFav,
        xReb,
        xBm,
        xPin,
        xCm,
        xVotes,
        xFollowing,
        xBlockedBy,
        xBlocking,
        xMuting,
        ...raw
      } = row;
      const s = decodeStatus(raw);
      const id = s.id;
      bundle.statuses.set(id, s);
      const author = parseJson<unknown[]>(xAuthor);
      if (author) bundle.accounts.set(s.accountId, decodeRow(AUTHOR(), author));
      const media = parseList(xMedia).map((m) => decodeRow(MEDIA(), m));
      if (media.length) bundle.media.set(id, media);
      const mens = parseList(xMentions) as { silent: number; account: unknown[] }[];
      for (const m of mens) {
        const account = decodeRow(AUTHOR(), m.account);
        if (!bundle.mentionIds.has(id)) bundle.mentionIds.set(id, new Set());
        bundle.mentionIds.get(id)!.add(account.id);
        if (m.silent) continue;
        const list = bundle.mentions.get(id) ?? [];
        list.push(account);
        bundle.mentions.set(id, list);
      }
      const tagNames = parseList(xTags) as string[];
      if (tagNames.length) bundle.tags.set(id, tagNames);
      const poll = parseJson<unknown[]>(xPoll);
      if (poll) bundle.polls.set(id, decodeRow(POLL(), poll));
      const app = parseJson<{ id: string; name: string; website: string | null }>(xApp);
      if (app) bundle.apps.set(unpadId(String(app.id)), { name: app.name, website: app.website });
      const card = parseJson<{ originalUrl: string; card: unknown[] }>(xCard);
      if (card) bundle.cards.set(id, { card: decodeRow(CARD(), card.card), url: card.originalUrl });
      const emojis = parseList(xEmojis ?? null) as StoredEmoji[];
      if (emojis.length) bundle.emojis.set(id, emojis);
      const quote = parseJson<unknown[]>(xQuote);
      if (quote) bundle.quotes.set(id, decodeRow(QUOTE(), quote));
      if (!viewerId) continue;
      if (xFav) vw.favourited.add(id);
      if (xReb) vw.reblogged.add(id);
      if (xBm) vw.bookmarked.add(id);
      if (xPin) vw.pinned.add(id);
      if (xCm && s.conversationId) vw.mutedConversations.add(s.conversationId);
      if (s.pollId && xVotes) {
        const votes = parseList(xVotes) as number[];
        if (votes.length) bundle.ownVotes.set(s.pollId, votes);
      }
      if (xFollowing) vw.following.add(s.accountId);
      if (xBlockedBy) vw.blockedBy.add(s.accountId);
      if (xBlocking) vw.blocking.add(s.accountId);
      if (xMuting) vw.muting.add(s.accountId);
    }
  }
  if (viewerId) {
    bundle.filters = compileFilters(res[rowsQs] as Parameters<typeof compileFilters>[0]);
    for (const d of res[rowsQs + 1] as { domain: string }[]) vw.blockedDomains.add(d.domain);
  }
  await loadLinkedCollections(db, bundle, viewerId);
  return bundle;
}

/** The collections the bundle's statuses link to (`tagged_collections`): one more round trip, only when some link may name one. */
export async function loadLinkedCollections(db: DB, bundle: StatusBundle, viewerId: string | null): Promise<void> {
  const links = [...new Set([...bundle.statuses.values()].flatMap((st) => collectionLinks(st.content)))].slice(0, MAX_PAGE_COLLECTION_LINKS);
  if (links.length) bundle.collections = await collectionsLinked(db, links, viewerId);
}

/** Links looked up as collections for one page of statuses at most. */
const MAX_PAGE_COLLECTION_LINKS = 40;

/** The links of a status's HTML whose path names a collection (`…/collections/…`), as Mastodon matches them: exactly. */
export function collectionLinks(content: string): string[] {
  if (!content.includes("/collections/")) return [];
  const out: string[] = [];
  for (const m of content.matchAll(/href="([^"]*\/collections\/[^"]*)"/g)) {
    const url = m[1]!.replaceAll("&amp;", "&");
    if (!out.includes(url)) out.push(url);
    if (out.length >= 10) break;
  }
  return out;
}

/** Status `tagged_collections`: the collections its links name, known here (Mastodon 4.6). */
function taggedCollections(cfg: Config, b: StatusBundle, s: StatusRow): MastodonCollection[] {
  const linked = b.collections;
  if (!linked?.rows.length) return [];
  const out: MastodonCollection[] = [];
  for (const url of collectionLinks(s.content)) {
    const c = linked.rows.find((r) => r.url === url || r.uri === url);
    if (c && !out.some((x) => x.id === c.id))
      out.push(renderCollectionRow(cfg, c, linked.items.get(c.id) ?? [], c.tagId ? linked.tagNames.get(c.tagId) : undefined));
  }
  return out;
}

/** Where a status is shown, for content filters. */
export interface StatusView {
  /**
   * The filter context of the place (home, notifications, public, thread, account): `filtered` lists only the filters
   * that apply there, and a status a `hide` filter matches is left out (not the viewer's own). Without a context,
   * `filtered` lists every active filter that matches (as Mastodon's REST API does) and nothing is left out.
   */
  filterContext?: FilterContext;
  /** Keep statuses a `hide` filter matches (thread ancestors), still reporting the match in `filtered`. */
  keepHidden?: boolean;
  /**
   * What the viewer may see. "visible" (the default): what the visibility rules allow (policy/visibility.ts
   * canSeeStatus). "own-interaction": the status is one the viewer just stopped favouriting, boosting or bookmarking,
   * which Mastodon's undo answers describe even when the viewer lost access since (its author blocks them, a follow
   * ended, a private mention): it and the status it boosts are shown unless their author is suspended. A status it
   * quotes keeps the rules. "delivered": the same, for a status rendered once for every feed the fan-out put it in
   * (who may see it was decided there; streaming/status-parts.ts).
   */
  access?: "visible" | "own-interaction" | "delivered";
}

/** The viewer's filters that match a status (a boost: the boosted status's text, and both ids). */
function filterMatches(b: StatusBundle, s: StatusRow, context: FilterContext | undefined): FilterMatch[] {
  if (!b.filters?.length) return [];
  const proper = (s.reblogOfId && b.statuses.get(s.reblogOfId)) || s;
  const text = () =>
    searchableText(
      proper,
      (b.media.get(proper.id) ?? []).map((m) => m.description),
      b.polls.get(proper.id)?.options ?? null,
    );
  return matchFilters(b.filters, text, s.reblogOfId ? [s.id, s.reblogOfId] : [s.id], context);
}

/**
 * The page and id of the status a local quote post quotes, while the quote is live (pending or accepted): what its
 * content's `quote-inline` fallback links (lib/text/quote-inline.ts), in the API and in the Note, as Mastodon's
 * TextFormatter#add_quote_fallback. Null for a remote status (its sender wrote its own), a withdrawn quote or a quoted
 * status no longer there.
 */
export function liveQuotedPage(cfg: Config, b: StatusBundle, s: StatusRow): { uri: string; url: string } | null {
  if (!s.local) return null;
  const q = b.quotes.get(s.id);
  if (!q?.quotedStatusId || (q.state !== "pending" && q.state !== "accepted")) return null;
  const quoted = b.statuses.get(q.quotedStatusId);
  const author = quoted ? b.accounts.get(quoted.accountId) : undefined;
  if (!quoted || !author) return null;
  return { uri: quoted.uri, url: quoted.url ?? (quoted.local ? statusUrl(cfg, author.username, quoted.id) : quoted.uri) };
}

export function renderStatusFrom(cfg: Config, b: StatusBundle, id: string, view: StatusView = {}): MastodonStatus | null {
  return renderOne(cfg, b, id, 0, view, null);
}

/** `quote` of a status: the quoted status in full (inside a quote: by id only, Mastodon's ShallowStatusSerializer). */
function quoteOf(cfg: Config, b: StatusBundle, s: StatusRow, view: StatusView, inQuote: boolean): MastodonStatus["quote"] {
  const q = b.quotes.get(s.id);
  if (!q || !quoteShown(q)) return null;
  // Inside a quote only the id is given, and the status it names is not loaded (one level).
  if (inQuote)
    return { state: q.state === "accepted" && !q.quotedStatusId ? "deleted" : q.state, quoted_status_id: q.state === "accepted" ? q.quotedStatusId : null };
  const quoted = q.quotedStatusId ? b.statuses.get(q.quotedStatusId) : undefined;
  const author = quoted ? b.accounts.get(quoted.accountId) : undefined;
  const v = b.viewer;
  const rendered = quoted && !quoted.reblogOfId ? renderOne(cfg, b, quoted.id, 1, { ...view, filterContext: undefined, access: undefined }, null, true) : null;
  return renderQuote(
    q,
    {
      rendered,
      exists: !!quoted && !!author,
      ownedByViewer: !!quoted && quoted.accountId === v.id,
      blockedDomain: !!author?.domain && v.blockedDomains.has(author.domain),
      blockedAccount: !!quoted && v.blocking.has(quoted.accountId),
      mutedAccount: !!quoted && v.muting.has(quoted.accountId),
    },
    false,
  );
}

function renderOne(
  cfg: Config,
  b: StatusBundle,
  id: string,
  depth: number,
  view: StatusView,
  inherited: FilterMatch[] | null,
  inQuote = false,
): MastodonStatus | null {
  const s = b.statuses.get(id);
  if (!s) return null;
  const account = b.accounts.get(s.accountId);
  if (!account) return null;
  const ownInteraction = (view.access === "own-interaction" || view.access === "delivered") && !account.suspendedAt;
  if (!ownInteraction && !canSeeStatus(b, s, account)) return null;
  // A boost carries its own result, and the boosted status inside it the same one (Mastodon's filters_map).
  const matches = b.viewer.id ? (inherited ?? filterMatches(b, s, view.filterContext)) : [];
  if (depth === 0 && view.filterContext && !view.keepHidden && matches.some((m) => m.filter.action === "hide")) {
    const authorId = s.reblogOfId ? b.statuses.get(s.reblogOfId)?.accountId : s.accountId;
    if (authorId !== b.viewer.id) return null;
  }
  let reblog: MastodonStatus | null = null;
  if (s.reblogOfId) {
    if (depth > 0) return null;
    reblog = renderOne(cfg, b, s.reblogOfId, depth + 1, view, matches);
    if (!reblog) return null;
  }
  const v = b.viewer;
  const target = s.reblogOfId ?? s.id;
  const media = (b.media.get(s.id) ?? []).slice();
  if (s.mediaIds?.length) {
    const order = new Map(s.mediaIds.map((m, i) => [m, i]));
    media.sort((x, y) => (order.get(x.id) ?? 99) - (order.get(y.id) ?? 99));
  }
  const poll = b.polls.get(s.id);
  const app = s.applicationId ? b.apps.get(s.applicationId) : undefined;
  const card = s.reblogOfId ? undefined : b.cards.get(s.id);
  const out: MastodonStatus = {
    id: s.id,
    created_at: isoTime(s.createdAt),
    in_reply_to_id: s.inReplyToId,
    in_reply_to_account_id: s.inReplyToAccountId,
    // Staff's "mark media as sensitive" covers every status of the account with media (Mastodon's sensitized).
    sensitive: s.sensitive || (account.sensitizedAt != null && media.length > 0),
    spoiler_text: s.spoilerText,
    visibility: s.visibility,
    language: s.language,
    uri: s.uri,
    url: s.reblogOfId ? null : (s.url ?? (s.local ? statusUrl(cfg, account.username, s.id) : s.uri)),
    replies_count: s.repliesCount,
    reblogs_count: s.reblogsCount,
    favourites_count: s.favouritesCount,
    quotes_count: s.quotesCount,
    edited_at: isoTime(s.editedAt),
    content: s.reblogOfId ? "" : withLocalQuoteFallback(s.content, liveQuotedPage(cfg, b, s)),
    reblog,
    application: app ? { name: app.name, website: app.website } : s.local && !s.reblogOfId ? { name: "Web", website: null } : undefined,
    account: renderAccount(cfg, account),
    // A domain blocked with reject_media: its files are not shown (accounts.reject_media, entities/statuses/media.ts).
    media_attachments: media.map((m) => renderMedia(cfg, m, account.rejectMedia)),
    mentions: (b.mentions.get(s.id) ?? []).map((a) => ({ id: a.id, username: a.username, url: a.url ?? a.uri, acct: acctOf(a) })),
    tags: (b.tags.get(s.id) ?? []).map((name) => ({ name, url: tagUrl(cfg, name) })),
    emojis: s.reblogOfId || account.rejectMedia ? [] : renderEmojis(cfg, b.emojis.get(s.id)),
    card: card ? renderPreviewCard(cfg, card.card, card.url) : null,
    poll: poll ? renderPoll(poll, v.id ? (b.ownVotes.get(poll.id) ?? []) : null, v.id === s.accountId) : null,
    quote: s.reblogOfId ? null : quoteOf(cfg, b, s, view, inQuote),
    // A boost answers for the boosted status (Mastodon's `object.proper`).
    quote_approval: quoteApprovalOf(b, (s.reblogOfId && b.statuses.get(s.reblogOfId)) || s),
    tagged_collections: taggedCollections(cfg, b, s),
  };
  // Set where Mastodon puts it, left out when absent (not `null`).
  if (out.application === undefined) delete out.application;
  if (v.id) {
    // A boost shows the viewer's relation to the boosted status (Mastodon reads them from `proper`).
    const conversationId = s.reblogOfId ? b.statuses.get(target)?.conversationId : s.conversationId;
    out.favourited = v.favourited.has(target) || v.favourited.has(s.id);
    out.reblogged = v.reblogged.has(target) || v.reblogged.has(s.id);
    out.muted = conversationId ? v.mutedConversations.has(conversationId) : false;
    out.bookmarked = v.bookmarked.has(target) || v.bookmarked.has(s.id);
    if (s.accountId === v.id) out.pinned = v.pinned.has(s.id);
    out.filtered = renderFilterResults(matches);
  }
  return out;
}

function quoteApprovalOf(b: StatusBundle, s: StatusRow) {
  return renderQuoteApproval(s, b.viewer.id, b.viewer.following.has(s.accountId));
}

/**
 * Renders statuses in the given order, dropping any the viewer may not see, and (given a filter context) any a
 * `hide` filter of the viewer's matches there.
 */
export async function renderStatuses(
  db: DB,
  cfg: Config,
  ids: string[],
  viewerId: string | null,
  view: FilterContext | StatusView = {},
  related?: readonly string[],
): Promise<MastodonStatus[]> {
  const b = await loadStatusBundle(db, ids, viewerId, related);
  const v = typeof view === "string" ? { filterContext: view } : view;
  const out: MastodonStatus[] = [];
  for (const id of ids) {
    const r = renderStatusFrom(cfg, b, id, v);
    if (r) out.push(r);
  }
  return out;
}

/** DELETE /api/v1/statuses/:id answers the Status with its source (`text`, `spoiler_text` as written) for a redraft. */
export function renderDeletedStatus(rendered: MastodonStatus, s: Pick<StatusRow, "text" | "spoilerText">): MastodonStatus {
  return { ...rendered, text: s.text, spoiler_text: s.spoilerText };
}

export async function renderStatus(db: DB, cfg: Config, id: string, viewerId: string | null): Promise<MastodonStatus | null> {
  const [r] = await renderStatuses(db, cfg, [id], viewerId);
  return r ?? null;
}
