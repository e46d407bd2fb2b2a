// Statuses → Mastodon Status JSON, in batches: whatever the page size, ONE D1 batch (one round trip) loads the
// statuses, their reblog targets, authors, media, mentions, tags, polls, applications and the viewer's relations.
// Every query takes the page's ids as one JSON parameter (db/id-list.ts), so the statement count is fixed. The same
// batch loads the viewer's active content filters; they are compiled once and matched in memory (`filtered`).
import { and, eq, inArray, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { idList } from "../db/client";
import {
  accounts,
  blocks,
  bookmarks,
  conversationMutes,
  favourites,
  follows,
  mediaAttachments,
  mentions,
  oauthApplications,
  polls,
  pollVotes,
  previewCards,
  quotes,
  statusPins,
  statusPreviewCards,
  statuses,
  statusTags,
  tags,
  type FilterContext,
} from "../db/schema";
import type { Config } from "../env";
import { padId, unpadId } from "../lib/ids";
import type { AccountRow, QuoteRow } from "../db/schema";
import { quoteShown, renderQuote, renderQuoteApproval } from "./quote";
import { acctOf, renderAccount, type MastodonAccount } from "./account";
import { renderMedia } from "./media";
import { renderPoll } from "./poll";
import { renderPreviewCard, type PreviewCardRow } from "./preview-card";
import { renderEmojis } from "./custom-emoji";
import { statusEmojisStatement, type StatusEmojiRow } from "../services/custom-emojis";
import type { StoredEmoji } from "../db/schema";
import { isoTime, statusUrl, tagUrl } from "./urls";
import { canSeeStatus } from "../services/visibility";
import {
  activeFilterRules,
  compileFilters,
  matchFilters,
  renderFilterResults,
  searchableText,
  type CompiledFilter,
  type FilterMatch,
} from "../services/filter-match";

export type StatusRow = typeof statuses.$inferSelect;

/** The fields every new status row starts with: no replies, boosts or favourites yet, never edited. */
export const newStatusFields = (createdAt: number, now = createdAt) =>
  ({ repliesCount: 0, reblogsCount: 0, favouritesCount: 0, quotesCount: 0, quoteApprovalPolicy: 0, createdAt, editedAt: null, updatedAt: now }) as const;
export type MediaRow = typeof mediaAttachments.$inferSelect;
export type PollRow = typeof polls.$inferSelect;

export interface StatusBundle {
  statuses: Map<string, StatusRow>;
  accounts: Map<string, AccountRow>;
  media: Map<string, MediaRow[]>;
  mentions: Map<string, AccountRow[]>;
  mentionIds: Map<string, Set<string>>;
  tags: Map<string, string[]>;
  polls: Map<string, PollRow>;
  ownVotes: Map<string, number[]>;
  apps: Map<string, { name: string; website: string | null }>;
  /** Each status's preview card, with the link as the status wrote it. */
  cards: Map<string, { card: PreviewCardRow; url: string }>;
  /** The custom emojis each status's text and content warning use (of its author's domain; local ones for local). */
  emojis: Map<string, StoredEmoji[]>;
  /** Each quoting status's quote row (src/entities/quote.ts); the quoted statuses are loaded with the page. */
  quotes: Map<string, QuoteRow>;
  /** The viewer's active filters, compiled; null when not loaded (no viewer, or a bundle built without a read). */
  filters: CompiledFilter[] | null;
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

/** The page's ids plus the ids of the statuses they reblog. */
function withReblogTargets(ids: string[]) {
  const list = idList(ids);
  return sql`(SELECT value FROM json_each(${JSON.stringify(ids.map(padId))}) UNION SELECT ${statuses.reblogOfId} FROM ${statuses} WHERE ${statuses.id} IN ${list} AND ${statuses.reblogOfId} IS NOT NULL)`;
}

/** …plus the statuses those quote (one level: a quoted status's own quote is shown by id only). */
function withQuoteTargets(ids: string[]) {
  const base = withReblogTargets(ids);
  return sql`(SELECT value FROM json_each(${JSON.stringify(ids.map(padId))}) UNION SELECT ${statuses.reblogOfId} FROM ${statuses} WHERE ${statuses.id} IN ${idList(ids)} AND ${statuses.reblogOfId} IS NOT NULL
    UNION SELECT ${quotes.quotedStatusId} FROM ${quotes} WHERE ${quotes.statusId} IN ${base} AND ${quotes.quotedStatusId} IS NOT NULL)`;
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

export async function loadStatusBundle(db: DB, ids: string[], viewerId: string | null): Promise<StatusBundle> {
  const bundle = emptyBundle(viewerId);
  if (ids.length === 0) return bundle;
  const all = withQuoteTargets(ids);
  const authorsOf = sql`(SELECT ${statuses.accountId} FROM ${statuses} WHERE ${statuses.id} IN ${all})`;
  const q = [
    db.select().from(statuses).where(inArray(statuses.id, all)),
    db.select().from(accounts).where(inArray(accounts.id, authorsOf)),
    db.select().from(mediaAttachments).where(inArray(mediaAttachments.statusId, all)),
    db
      .select({ statusId: mentions.statusId, silent: mentions.silent, account: accounts })
      .from(mentions)
      .innerJoin(accounts, eq(accounts.id, mentions.accountId))
      .where(inArray(mentions.statusId, all)),
    db
      .select({ statusId: statusTags.statusId, name: tags.name })
      .from(statusTags)
      .innerJoin(tags, eq(tags.id, statusTags.tagId))
      .where(inArray(statusTags.statusId, all)),
    db.select().from(polls).where(inArray(polls.statusId, all)),
    db
      .select({ id: oauthApplications.id, name: oauthApplications.name, website: oauthApplications.website })
      .from(oauthApplications)
      .where(inArray(oauthApplications.id, sql`(SELECT ${statuses.applicationId} FROM ${statuses} WHERE ${statuses.id} IN ${all} AND ${statuses.local} = 1)`)),
    // The card's own `url` column and the link's collide by name in a batch result: the link's is aliased.
    db
      .select({ statusId: statusPreviewCards.statusId, originalUrl: sql<string>`${statusPreviewCards.url}`.as("original_url"), card: previewCards })
      .from(statusPreviewCards)
      .innerJoin(previewCards, eq(previewCards.id, statusPreviewCards.previewCardId))
      .where(inArray(statusPreviewCards.statusId, all)),
    statusEmojisStatement(db, all),
    db.select().from(quotes).where(inArray(quotes.statusId, all)),
  ] as const;
  const v = viewerId ?? "0";
  const viewerQ = [
    db
      .select({ id: favourites.statusId })
      .from(favourites)
      .where(and(eq(favourites.accountId, v), inArray(favourites.statusId, all))),
    db
      .select({ id: statuses.reblogOfId })
      .from(statuses)
      .where(and(eq(statuses.accountId, v), inArray(statuses.reblogOfId, all))),
    db
      .select({ id: bookmarks.statusId })
      .from(bookmarks)
      .where(and(eq(bookmarks.accountId, v), inArray(bookmarks.statusId, all))),
    db
      .select({ id: statusPins.statusId })
      .from(statusPins)
      .where(and(eq(statusPins.accountId, v), inArray(statusPins.statusId, all))),
    db
      .select({ id: conversationMutes.conversationId })
      .from(conversationMutes)
      .where(
        and(
          eq(conversationMutes.accountId, v),
          inArray(conversationMutes.conversationId, sql`(SELECT ${statuses.conversationId} FROM ${statuses} WHERE ${statuses.id} IN ${all})`),
        ),
      ),
    db
      .select({ id: follows.targetAccountId })
      .from(follows)
      .where(and(eq(follows.accountId, v), inArray(follows.targetAccountId, authorsOf))),
    db
      .select({ id: blocks.accountId })
      .from(blocks)
      .where(and(eq(blocks.targetAccountId, v), inArray(blocks.accountId, authorsOf))),
    db
      .select({ pollId: pollVotes.pollId, choice: pollVotes.choice })
      .from(pollVotes)
      .where(and(eq(pollVotes.accountId, v), inArray(pollVotes.pollId, sql`(SELECT ${statuses.pollId} FROM ${statuses} WHERE ${statuses.id} IN ${all})`))),
    activeFilterRules(db, v, all, Date.now()),
    // Who the viewer hides among the authors, for the states of quotes (blocked_account, muted_account, blocked_domain).
    db.all<{
      k: string;
      id: string;
    }>(sql`SELECT 'b' AS k, target_account_id AS id FROM blocks WHERE account_id = ${padId(v)} AND target_account_id IN ${authorsOf}
      UNION ALL SELECT 'm', target_account_id FROM mutes WHERE account_id = ${padId(v)} AND target_account_id IN ${authorsOf} AND (expires_at IS NULL OR expires_at > ${Date.now()})
      UNION ALL SELECT 'd', domain FROM account_domain_blocks WHERE account_id = ${padId(v)}`),
  ] as const;
  const res = viewerId ? await db.batch([...q, ...viewerQ]) : await db.batch([...q]);
  const [sRows, aRows, mRows, menRows, tagRows, pollRows, appRows, cardRows, emojiRows, quoteRows] = res as unknown as [
    StatusRow[],
    AccountRow[],
    MediaRow[],
    { statusId: string; silent: boolean; account: AccountRow }[],
    { statusId: string; name: string }[],
    PollRow[],
    { id: string; name: string; website: string | null }[],
    { statusId: string; originalUrl: string; card: PreviewCardRow }[],
    StatusEmojiRow[],
    QuoteRow[],
  ];
  for (const s of sRows) bundle.statuses.set(s.id, s);
  for (const a of aRows) bundle.accounts.set(a.id, a);
  for (const m of mRows) {
    const list = bundle.media.get(m.statusId!) ?? [];
    list.push(m);
    bundle.media.set(m.statusId!, list);
  }
  for (const m of menRows) {
    if (!bundle.mentionIds.has(m.statusId)) bundle.mentionIds.set(m.statusId, new Set());
    bundle.mentionIds.get(m.statusId)!.add(m.account.id);
    if (m.silent) continue;
    const list = bundle.mentions.get(m.statusId) ?? [];
    list.push(m.account);
    bundle.mentions.set(m.statusId, list);
  }
  for (const t of tagRows) {
    const list = bundle.tags.get(t.statusId) ?? [];
    list.push(t.name);
    bundle.tags.set(t.statusId, list);
  }
  for (const p of pollRows) if (p.statusId) bundle.polls.set(p.statusId, p);
  for (const a of appRows) bundle.apps.set(a.id, { name: a.name, website: a.website });
  for (const c of cardRows) bundle.cards.set(c.statusId, { card: c.card, url: c.originalUrl });
  for (const q of quoteRows) bundle.quotes.set(q.statusId, q);
  for (const { status_id, ...e } of emojiRows) {
    const sid = unpadId(String(status_id));
    const list = bundle.emojis.get(sid) ?? [];
    list.push(e);
    bundle.emojis.set(sid, list);
  }
  if (viewerId) {
    const rest = res.slice(q.length) as unknown as { id: string }[][];
    const [fav = [], reb = [], bm = [], pin = [], cm = [], fol = [], blk = []] = rest;
    for (const r of fav) bundle.viewer.favourited.add(r.id);
    for (const r of reb) if (r.id) bundle.viewer.reblogged.add(r.id);
    for (const r of bm) bundle.viewer.bookmarked.add(r.id);
    for (const r of pin) bundle.viewer.pinned.add(r.id);
    for (const r of cm) bundle.viewer.mutedConversations.add(r.id);
    for (const r of fol) bundle.viewer.following.add(r.id);
    for (const r of blk) bundle.viewer.blockedBy.add(r.id);
    const votes = res[q.length + 7] as unknown as { pollId: string; choice: number }[];
    for (const vt of votes) {
      const list = bundle.ownVotes.get(vt.pollId) ?? [];
      list.push(vt.choice);
      bundle.ownVotes.set(vt.pollId, list);
    }
    bundle.filters = compileFilters(res[q.length + 8] as unknown as Parameters<typeof compileFilters>[0]);
    for (const h of res[q.length + 9] as unknown as { k: string; id: string }[]) {
      if (h.k === "d") bundle.viewer.blockedDomains.add(h.id);
      else (h.k === "b" ? bundle.viewer.blocking : bundle.viewer.muting).add(unpadId(String(h.id)));
    }
  }
  return bundle;
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

export function renderStatusFrom(cfg: Config, b: StatusBundle, id: string, view: StatusView = {}): Record<string, unknown> | null {
  return renderOne(cfg, b, id, 0, view, null);
}

/** `quote` of a status: the quoted status in full (inside a quote: by id only, Mastodon's ShallowStatusSerializer). */
function quoteOf(cfg: Config, b: StatusBundle, s: StatusRow, view: StatusView, inQuote: boolean): Record<string, unknown> | null {
  const q = b.quotes.get(s.id);
  if (!q || !quoteShown(q)) return null;
  // Inside a quote only the id is given, and the status it names is not loaded (one level).
  if (inQuote)
    return { state: q.state === "accepted" && !q.quotedStatusId ? "deleted" : q.state, quoted_status_id: q.state === "accepted" ? q.quotedStatusId : null };
  const quoted = q.quotedStatusId ? b.statuses.get(q.quotedStatusId) : undefined;
  const author = quoted ? b.accounts.get(quoted.accountId) : undefined;
  const v = b.viewer;
  const rendered = quoted && !quoted.reblogOfId ? renderOne(cfg, b, quoted.id, 1, { ...view, filterContext: undefined }, null, true) : null;
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
): Record<string, unknown> | null {
  const s = b.statuses.get(id);
  if (!s) return null;
  const account = b.accounts.get(s.accountId);
  if (!account) return null;
  if (!canSeeStatus(b, s, account)) return null;
  // A boost carries its own result, and the boosted status inside it the same one (Mastodon's filters_map).
  const matches = b.viewer.id ? (inherited ?? filterMatches(b, s, view.filterContext)) : [];
  if (depth === 0 && view.filterContext && !view.keepHidden && matches.some((m) => m.filter.action === "hide")) {
    const authorId = s.reblogOfId ? b.statuses.get(s.reblogOfId)?.accountId : s.accountId;
    if (authorId !== b.viewer.id) return null;
  }
  let reblog: Record<string, unknown> | null = null;
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
  const out: Record<string, unknown> = {
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
    content: s.reblogOfId ? "" : s.content,
    reblog,
    application: app ? { name: app.name, website: app.website } : s.local && !s.reblogOfId ? { name: "Web", website: null } : undefined,
    account: renderAccount(cfg, account) as MastodonAccount,
    media_attachments: media.map((m) => renderMedia(cfg, m)),
    mentions: (b.mentions.get(s.id) ?? []).map((a) => ({ id: a.id, username: a.username, url: a.url ?? a.uri, acct: acctOf(a) })),
    tags: (b.tags.get(s.id) ?? []).map((name) => ({ name, url: tagUrl(cfg, name) })),
    emojis: s.reblogOfId ? [] : renderEmojis(cfg, b.emojis.get(s.id)),
    card: card ? renderPreviewCard(card.card, card.url) : null,
    poll: poll ? renderPoll(poll, v.id ? (b.ownVotes.get(poll.id) ?? []) : null, v.id === s.accountId) : null,
    quote: s.reblogOfId ? null : quoteOf(cfg, b, s, view, inQuote),
    // A boost answers for the boosted status (Mastodon's `object.proper`).
    quote_approval: quoteApprovalOf(b, (s.reblogOfId && b.statuses.get(s.reblogOfId)) || s),
  };
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
): Promise<Record<string, unknown>[]> {
  const b = await loadStatusBundle(db, ids, viewerId);
  const v = typeof view === "string" ? { filterContext: view } : view;
  const out: Record<string, unknown>[] = [];
  for (const id of ids) {
    const r = renderStatusFrom(cfg, b, id, v);
    if (r) out.push(r);
  }
  return out;
}

export async function renderStatus(db: DB, cfg: Config, id: string, viewerId: string | null): Promise<Record<string, unknown> | null> {
  const [r] = await renderStatuses(db, cfg, [id], viewerId);
  return r ?? null;
}

void or;
