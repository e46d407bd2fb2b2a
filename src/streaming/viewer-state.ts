// What a hub knows about its account to filter shared streams (public, hashtag) the way the REST timelines do: whom
// it blocks, who blocks it, whom it mutes, which domains it blocks, its chosen languages and its content filters.
// Loaded in ONE D1 batch when first needed, kept in memory, dropped on a relations_changed or filters_changed event
// and after CACHE_MS anyway (a missed invalidation heals by itself).
import { sql } from "drizzle-orm";
import { type DB, runBatch } from "../db/client";
import { padId, unpadId } from "../lib/text/ids";
import { activeFilterRules, compileFilters, matchFilters, type CompiledFilter, type FilterRuleRow } from "../policy/filter-match";
import { renderFilterResults } from "../entities/statuses/filter-result";
import type { FilterContext } from "../db/schema";
import type { AccountPart, StatusMeta, ViewerFacts } from "./protocol";

export const CACHE_MS = 10 * 60 * 1000;

export interface ViewerState {
  accountId: string;
  blocks: Set<string>;
  blockedBy: Set<string>;
  /** muted account → expiry (ms) or null. */
  mutes: Map<string, number | null>;
  domains: Set<string>;
  languages: string[] | null;
  filters: CompiledFilter[];
  loadedAt: number;
}

export async function loadViewerState(db: DB, accountId: string): Promise<ViewerState> {
  const v = padId(accountId);
  const now = Date.now();
  const [out, inc, mut, dom, usr, rules] = (await runBatch(db, [
    db.all<{ id: string }>(sql`SELECT target_account_id AS id FROM blocks WHERE account_id = ${v}`),
    db.all<{ id: string }>(sql`SELECT account_id AS id FROM blocks WHERE target_account_id = ${v}`),
    db.all<{ id: string; exp: number | null }>(sql`SELECT target_account_id AS id, expires_at AS exp FROM mutes WHERE account_id = ${v}`),
    db.all<{ domain: string }>(sql`SELECT domain FROM account_domain_blocks WHERE account_id = ${v}`),
    db.all<{ langs: string | null }>(sql`SELECT chosen_languages AS langs FROM users WHERE account_id = ${v} LIMIT 1`),
    // Every status filter of the account, not just those naming a page's statuses.
    activeFilterRules(db, accountId, sql`(SELECT status_id FROM custom_filter_statuses WHERE account_id = ${v})`, now),
  ])) as unknown as [
    { id: string }[],
    { id: string }[],
    { id: string; exp: number | null }[],
    { domain: string }[],
    { langs: string | null }[],
    FilterRuleRow[],
  ];
  let languages: string[] | null = null;
  try {
    const parsed = usr[0]?.langs ? JSON.parse(usr[0].langs) : null;
    if (Array.isArray(parsed) && parsed.length) languages = parsed.filter((x): x is string => typeof x === "string");
  } catch {}
  return {
    accountId,
    blocks: new Set(out.map((r) => unpadId(r.id))),
    blockedBy: new Set(inc.map((r) => unpadId(r.id))),
    mutes: new Map(mut.map((r) => [unpadId(r.id), r.exp == null ? null : Number(r.exp)])),
    domains: new Set(dom.map((r) => r.domain.toLowerCase())),
    languages,
    filters: compileFilters(rules),
    loadedAt: now,
  };
}

function muted(st: ViewerState, id: string, now: number): boolean {
  if (!st.mutes.has(id)) return false;
  const exp = st.mutes.get(id);
  return exp == null || exp > now;
}

/**
 * What an accepted quote whose quoted status the signed-out rendering shows becomes for this viewer, as REST renders
 * it (entities/statuses/quote.ts renderQuote): `unauthorized` without the status when its author blocks the viewer, else
 * `blocked_domain`, `blocked_account` or `muted_account` with it; null when it stays as rendered.
 */
function quoteStateFor(st: ViewerState, q: NonNullable<StatusMeta["quote"]>, now: number): string | null {
  if (q.authorId === st.accountId) return null;
  if (st.blockedBy.has(q.authorId)) return "unauthorized";
  if (q.authorDomain && st.domains.has(q.authorDomain.toLowerCase())) return "blocked_domain";
  if (st.blocks.has(q.authorId)) return "blocked_account";
  if (muted(st, q.authorId, now)) return "muted_account";
  return null;
}

/**
 * A status of a shared stream as this viewer gets it: null when REST's public and hashtag timelines would leave it
 * out for them (author or a mentioned account blocked or muted, author blocking them, author's domain blocked,
 * language not chosen, a `hide` filter of the public context), else the payload, with `filtered` added when the
 * viewer has filters (as Mastodon's streaming server adds it) and its quote as REST shows it to the viewer.
 */
export function sharedPayloadFor(st: ViewerState, meta: StatusMeta, payload: string): string | null {
  const now = Date.now();
  const own = meta.authorId === st.accountId;
  if (!own) {
    if (st.blocks.has(meta.authorId) || st.blockedBy.has(meta.authorId) || muted(st, meta.authorId, now)) return null;
    if (meta.authorDomain && st.domains.has(meta.authorDomain.toLowerCase())) return null;
    for (const m of meta.mentionIds) if (m !== st.accountId && (st.blocks.has(m) || muted(st, m, now))) return null;
  }
  if (st.languages && !(meta.language && st.languages.includes(meta.language))) return null;
  const live = st.filters.filter((f) => f.expiresAt == null || f.expiresAt > now);
  const quoteState = meta.quote ? quoteStateFor(st, meta.quote, now) : null;
  if (!live.length && !quoteState) return payload;
  const matches = live.length ? matchFilters(live, () => meta.filterText, [meta.statusId], "public") : [];
  if (!own && matches.some((m) => m.filter.action === "hide")) return null;
  try {
    const out = JSON.parse(payload) as Record<string, unknown>;
    if (quoteState) out.quote = quoteState === "unauthorized" ? { state: quoteState, quoted_status: null } : { ...(out.quote as object), state: quoteState };
    if (live.length) out.filtered = renderFilterResults(matches);
    return JSON.stringify(out);
  } catch {
    return payload;
  }
}

/**
 * A status of an account stream (user, list, direct) as this viewer's REST timeline renders it, from the publisher's
 * one rendering (AccountPart): null when REST would not show it (its author or the boosted status's author blocks the
 * viewer; a private or direct status it is neither mentioned in nor, for a private one, following the author of; a
 * `hide` filter of the context), else the payload with the viewer's fields, as Mastodon's
 * StatusCacheHydrator adds them to its one rendering: favourited, reblogged, muted, bookmarked (from `facts`, the
 * boosted status's for a boost), `filtered` (the context's filters; all matching ones without a context), the poll's
 * `voted`/`own_votes` and `quote_approval.current_user`. `filters`: the viewer's compiled filters (empty when the
 * facts say it has none). The authors' own hubs never come here (pinned, poll totals: hub.ts renders theirs).
 */
export function accountPayloadFor(
  viewerId: string,
  part: AccountPart,
  facts: ViewerFacts | undefined,
  filters: readonly CompiledFilter[],
  context: FilterContext | undefined,
): string | null {
  if (facts?.blockedBy) return null;
  if (part.restricted?.some((r) => !(r.mentioned.includes(viewerId) || (r.followers && facts?.follows)))) return null;
  const now = Date.now();
  const live = filters.filter((f) => f.expiresAt == null || f.expiresAt > now);
  const matches = live.length ? matchFilters(live, () => part.filterText, part.filterIds, context) : [];
  if (context && matches.some((m) => m.filter.action === "hide")) return null;
  const filtered = renderFilterResults(matches);
  const currentUser = part.quoteApproval[facts?.follows ? 0 : 1];
  const votes = facts?.votes ?? [];
  const hydrate = (o: Record<string, unknown>) => {
    o.favourited = !!facts?.favourited;
    o.reblogged = !!facts?.reblogged;
    o.muted = !!facts?.muted;
    o.bookmarked = !!facts?.bookmarked;
    o.filtered = filtered;
    const poll = o.poll as Record<string, unknown> | null;
    if (poll) {
      poll.voted = votes.length > 0;
      poll.own_votes = votes;
    }
    const qa = o.quote_approval as Record<string, unknown> | undefined;
    if (qa) qa.current_user = currentUser;
  };
  const out = JSON.parse(part.payload) as Record<string, unknown>;
  const reblog = out.reblog as Record<string, unknown> | null;
  if (reblog) hydrate(reblog);
  hydrate(out);
  return JSON.stringify(out);
}
