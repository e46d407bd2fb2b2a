// Content filters (Mastodon's CustomFilter with its keywords and status filters): the v2 API's actions and the
// legacy v1 API's, where a v1 filter is one keyword of a filter (its id is the keyword's id). A filter and its rules
// are visible only to their owner: any other id is a 404 (security B14). Every successful write records ONE
// filters_changed effect, however many keywords it touched.
import { and, asc, count, eq, sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { deleteOwnRow, ownRow, ownedBy } from "../../db/owned";
import { customFilterKeywords, customFilters, customFilterStatuses, statuses, type FilterAction, type FilterContext } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { FilterKeywordRow, FilterRow, FilterStatusRow, FilterWithRules } from "../../entities/statuses/filter";
import { ApiError, notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { statusReadableBy } from "../../policy/visibility";

export const FILTER_CONTEXTS: readonly FilterContext[] = ["home", "notifications", "public", "thread", "account"];
export const FILTER_ACTIONS: readonly FilterAction[] = ["warn", "hide", "blur"];
export const MAX_TITLE = 256; // Mastodon's CustomFilter title limit
export const MAX_KEYWORD = 512; // CustomFilterKeyword::KEYWORD_LENGTH_LIMIT
// Bounds of our own: every page a user reads loads all their active keywords, so their number is capped.
export const MAX_FILTERS = 300;
export const MAX_KEYWORDS = 1000;
export const MAX_FILTER_STATUSES = 1000;
const MAX_EXPIRES_IN = 100 * 365 * 24 * 3600; // seconds; beyond this an expiry is not a date JSON can carry usefully

export const DEPRECATED_MULTIPLE_KEYWORDS =
  "These parameters cannot be changed from this application because they apply to more than one filter keyword. Use a more recent application or the web interface";

export interface KeywordAttribute {
  id?: string;
  keyword?: string;
  wholeWord?: boolean;
  destroy?: boolean;
}

export interface FilterInput {
  title?: string;
  context?: string[];
  action?: string;
  /** Seconds from now; null: never expires; undefined: unchanged (never, on create). */
  expiresIn?: number | null;
  keywords?: KeywordAttribute[];
}

/**
 * Open streams reload the account's filters. Recorded after each write, not journaled with it (src/effects/commit.ts):
 * it refreshes in-memory state of open streams only, and a stream that missed it reads the filters on its next connect.
 */
const changed = (fx: Effects, accountId: string) => fx.add({ type: "filters_changed", accountId });

/** Rails-style validation messages, joined into one 422. */
class Errors {
  private list: string[] = [];
  add(msg: string) {
    if (!this.list.includes(msg)) this.list.push(msg);
  }
  check() {
    if (this.list.length) throw validationFailed(this.list.join(", "));
  }
}

const chars = (s: string) => Array.from(s).length;
const blank = (s: string | undefined) => s === undefined || s.trim() === "";

function checkTitle(e: Errors, title: string | undefined, name = "Title") {
  if (blank(title)) e.add(`${name} can't be blank`);
  else if (chars(title!) > MAX_TITLE) e.add(`${name} is too long (maximum is ${MAX_TITLE} characters)`);
}

/** Mastodon strips the contexts and drops blank ones; none, or an unknown one, is invalid. */
function normalizeContext(e: Errors, raw: string[] | undefined): FilterContext[] {
  const list = [...new Set((raw ?? []).map((c) => c.trim()).filter(Boolean))];
  if (!list.length) e.add("Context can't be blank");
  if (!list.length || list.some((c) => !FILTER_CONTEXTS.includes(c as FilterContext))) e.add("Context None or invalid context supplied");
  return list as FilterContext[];
}

function checkAction(e: Errors, action: string | undefined): FilterAction | undefined {
  if (action === undefined) return undefined;
  if (!FILTER_ACTIONS.includes(action as FilterAction)) e.add("Action is not included in the list");
  return action as FilterAction;
}

/** `nested`: given through keywords_attributes (Rails then names the attribute "Keywords keyword"). */
function checkKeyword(e: Errors, keyword: string | undefined, nested = false) {
  const name = nested ? "Keywords keyword" : "Keyword";
  if (blank(keyword)) e.add(`${name} can't be blank`);
  else if (chars(keyword!) > MAX_KEYWORD) e.add(`${name} is too long (maximum is ${MAX_KEYWORD} characters)`);
}

export function expiresAtFrom(expiresIn: number | null, now: number): number | null {
  if (expiresIn == null) return null;
  return now + Math.min(Math.max(0, expiresIn), MAX_EXPIRES_IN) * 1000;
}

/** keywords_attributes items Rails would not skip (`reject_if: :all_blank`, `_destroy` without an id attaches nothing). */
function meaningful(attrs: KeywordAttribute[] | undefined): KeywordAttribute[] {
  return (attrs ?? []).filter((a) => {
    if (a.destroy && !a.id) return false;
    return !(blank(a.id) && blank(a.keyword) && a.wholeWord === undefined);
  });
}

// ---- reads ----

const ownFilter = (db: DB, accountId: string, id: string) =>
  db
    .select()
    .from(customFilters)
    .where(ownedBy(customFilters, id, accountId))
    .limit(1);
const keywordsOf = (db: DB, accountId: string, filterId: string) =>
  db
    .select()
    .from(customFilterKeywords)
    .where(and(eq(customFilterKeywords.customFilterId, filterId), eq(customFilterKeywords.accountId, accountId)))
    .orderBy(asc(customFilterKeywords.id));
const statusesOf = (db: DB, accountId: string, filterId: string) =>
  db
    .select()
    .from(customFilterStatuses)
    .where(and(eq(customFilterStatuses.customFilterId, filterId), eq(customFilterStatuses.accountId, accountId)))
    .orderBy(asc(customFilterStatuses.id));

function group(filters: FilterRow[], keywords: FilterKeywordRow[], stats: FilterStatusRow[]): FilterWithRules[] {
  const byId = new Map(filters.map((f) => [f.id, { filter: f, keywords: [] as FilterKeywordRow[], statuses: [] as FilterStatusRow[] }]));
  for (const k of keywords) byId.get(k.customFilterId)?.keywords.push(k);
  for (const s of stats) byId.get(s.customFilterId)?.statuses.push(s);
  return [...byId.values()];
}

/** All the account's filters with their keywords and statuses, oldest first (one round trip). */
export async function listFilters(db: DB, accountId: string): Promise<FilterWithRules[]> {
  const [f, k, s] = await db.batch([
    db.select().from(customFilters).where(eq(customFilters.accountId, accountId)).orderBy(asc(customFilters.id)),
    db.select().from(customFilterKeywords).where(eq(customFilterKeywords.accountId, accountId)).orderBy(asc(customFilterKeywords.id)),
    db.select().from(customFilterStatuses).where(eq(customFilterStatuses.accountId, accountId)).orderBy(asc(customFilterStatuses.id)),
  ]);
  return group(f, k, s);
}

export async function getFilter(db: DB, accountId: string, id: string): Promise<FilterWithRules> {
  const [f, k, s] = await db.batch([ownFilter(db, accountId, id), keywordsOf(db, accountId, id), statusesOf(db, accountId, id)]);
  if (!f[0]) throw notFound();
  return { filter: f[0], keywords: k, statuses: s };
}

async function counts(db: DB, accountId: string) {
  const [f, k] = await db.batch([
    db.select({ n: count() }).from(customFilters).where(eq(customFilters.accountId, accountId)),
    db.select({ n: count() }).from(customFilterKeywords).where(eq(customFilterKeywords.accountId, accountId)),
  ]);
  return { filters: Number(f[0]?.n ?? 0), keywords: Number(k[0]?.n ?? 0) };
}

function checkKeywordRoom(current: number, adding: number) {
  if (adding > 0 && current + adding > MAX_KEYWORDS) throw validationFailed(`You have reached the maximum of ${MAX_KEYWORDS} filter keywords`);
}

// ---- writes: v2 ----

function newKeyword(accountId: string, filterId: string, keyword: string, wholeWord: boolean, now: number): FilterKeywordRow {
  return { id: snowflake(now), customFilterId: filterId, accountId, keyword, wholeWord, createdAt: now, updatedAt: now };
}

/** INSERT of a keyword that happens only while its filter still exists and is the owner's. */
function insertKeyword(db: DB, k: FilterKeywordRow) {
  return db.run(sql`INSERT INTO custom_filter_keywords (id, custom_filter_id, account_id, keyword, whole_word, created_at, updated_at)
    SELECT ${padId(k.id)}, ${padId(k.customFilterId)}, ${padId(k.accountId)}, ${k.keyword}, ${k.wholeWord ? 1 : 0}, ${k.createdAt}, ${k.updatedAt}
    WHERE EXISTS (SELECT 1 FROM custom_filters WHERE id = ${padId(k.customFilterId)} AND account_id = ${padId(k.accountId)})`);
}

export async function createFilter(db: DB, fx: Effects, accountId: string, input: FilterInput): Promise<FilterWithRules> {
  const e = new Errors();
  checkTitle(e, input.title);
  const context = normalizeContext(e, input.context);
  const action = checkAction(e, input.action) ?? "warn";
  const attrs = meaningful(input.keywords);
  // Naming an existing keyword while creating a filter is a 404 (Mastodon looks it up in the new, empty filter).
  if (attrs.some((a) => a.id)) throw notFound();
  for (const a of attrs) checkKeyword(e, a.keyword, true);
  e.check();
  const now = Date.now();
  const have = await counts(db, accountId);
  if (have.filters >= MAX_FILTERS) throw validationFailed(`You have reached the maximum of ${MAX_FILTERS} filters`);
  checkKeywordRoom(have.keywords, attrs.length);
  const filter: FilterRow = {
    id: snowflake(now),
    accountId,
    title: input.title!,
    context,
    action,
    expiresAt: expiresAtFrom(input.expiresIn ?? null, now),
    createdAt: now,
    updatedAt: now,
  };
  const keywords = attrs.map((a) => newKeyword(accountId, filter.id, a.keyword!, a.wholeWord ?? true, now));
  await db.batch([db.insert(customFilters).values(filter), ...keywords.map((k) => insertKeyword(db, k))]);
  changed(fx, accountId);
  return { filter, keywords, statuses: [] };
}

export async function updateFilter(db: DB, fx: Effects, accountId: string, id: string, input: FilterInput): Promise<FilterWithRules> {
  const [f, k, s, total] = await db.batch([
    ownFilter(db, accountId, id),
    keywordsOf(db, accountId, id),
    statusesOf(db, accountId, id),
    db.select({ n: count() }).from(customFilterKeywords).where(eq(customFilterKeywords.accountId, accountId)),
  ]);
  const old = f[0];
  if (!old) throw notFound();
  const e = new Errors();
  if (input.title !== undefined) checkTitle(e, input.title);
  const context = input.context !== undefined ? normalizeContext(e, input.context) : old.context;
  const action = checkAction(e, input.action) ?? old.action;
  const attrs = meaningful(input.keywords);
  const byId = new Map(k.map((x) => [x.id, x]));
  // A keyword id that is not one of this filter's is a 404, before anything is written (Mastodon).
  if (attrs.some((a) => a.id && !byId.has(a.id))) throw notFound();
  for (const a of attrs) {
    if (a.destroy) continue;
    if (!a.id || a.keyword !== undefined) checkKeyword(e, a.keyword, true);
  }
  e.check();
  const now = Date.now();
  const filter: FilterRow = {
    ...old,
    title: input.title ?? old.title,
    context,
    action,
    expiresAt: input.expiresIn !== undefined ? expiresAtFrom(input.expiresIn, now) : old.expiresAt,
    updatedAt: now,
  };
  const stmts = [];
  const kept = new Map(k.map((x) => [x.id, x]));
  const added: FilterKeywordRow[] = [];
  for (const a of attrs) {
    if (a.id && a.destroy) {
      kept.delete(a.id);
      stmts.push(db.delete(customFilterKeywords).where(and(eq(customFilterKeywords.id, a.id), eq(customFilterKeywords.accountId, accountId))));
    } else if (a.id) {
      const cur = kept.get(a.id);
      if (!cur) continue; // destroyed earlier in the same call
      const next = { ...cur, keyword: a.keyword ?? cur.keyword, wholeWord: a.wholeWord ?? cur.wholeWord, updatedAt: now };
      kept.set(a.id, next);
      stmts.push(
        db
          .update(customFilterKeywords)
          .set({ keyword: next.keyword, wholeWord: next.wholeWord, updatedAt: now })
          .where(and(eq(customFilterKeywords.id, a.id), eq(customFilterKeywords.accountId, accountId))),
      );
    } else {
      added.push(newKeyword(accountId, id, a.keyword!, a.wholeWord ?? true, now));
    }
  }
  checkKeywordRoom(Number(total[0]?.n ?? 0), added.length);
  await db.batch([
    db
      .update(customFilters)
      .set({ title: filter.title, context: filter.context, action: filter.action, expiresAt: filter.expiresAt, updatedAt: now })
      .where(ownedBy(customFilters, id, accountId)),
    ...stmts,
    ...added.map((x) => insertKeyword(db, x)),
  ]);
  changed(fx, accountId);
  const keywords = [...kept.values(), ...added].sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
  return { filter, keywords, statuses: s };
}

export async function deleteFilter(db: DB, fx: Effects, accountId: string, id: string): Promise<void> {
  const [gone] = await db.batch([
    db
      .delete(customFilters)
      .where(ownedBy(customFilters, id, accountId))
      .returning({ id: customFilters.id }),
    db.delete(customFilterKeywords).where(and(eq(customFilterKeywords.customFilterId, id), eq(customFilterKeywords.accountId, accountId))),
    db.delete(customFilterStatuses).where(and(eq(customFilterStatuses.customFilterId, id), eq(customFilterStatuses.accountId, accountId))),
  ]);
  if (!gone.length) throw notFound();
  changed(fx, accountId);
}

/** What `read` finds, read in one batch with the filter: 404 when the filter is not the account's. */
async function inOwnFilter<Q extends Statement>(db: DB, accountId: string, filterId: string, read: Q): Promise<Q["_"]["result"]> {
  const [f, rows] = await db.batch([ownFilter(db, accountId, filterId), read]);
  if (!f[0]) throw notFound();
  return rows;
}

// ---- keywords ----

export async function listKeywords(db: DB, accountId: string, filterId: string): Promise<FilterKeywordRow[]> {
  return inOwnFilter(db, accountId, filterId, keywordsOf(db, accountId, filterId));
}

export async function getKeyword(db: DB, accountId: string, id: string): Promise<FilterKeywordRow> {
  return ownRow(db, customFilterKeywords, id, accountId);
}

export async function addKeyword(
  db: DB,
  fx: Effects,
  accountId: string,
  filterId: string,
  input: { keyword?: string; wholeWord?: boolean },
): Promise<FilterKeywordRow> {
  const [f, total] = await db.batch([
    ownFilter(db, accountId, filterId),
    db.select({ n: count() }).from(customFilterKeywords).where(eq(customFilterKeywords.accountId, accountId)),
  ]);
  if (!f[0]) throw notFound();
  const e = new Errors();
  checkKeyword(e, input.keyword);
  e.check();
  checkKeywordRoom(Number(total[0]?.n ?? 0), 1);
  const now = Date.now();
  const row = newKeyword(accountId, filterId, input.keyword!, input.wholeWord ?? true, now);
  const res = await insertKeyword(db, row);
  if (!res.meta.changes) throw notFound(); // the filter was deleted meanwhile
  changed(fx, accountId);
  return row;
}

export async function updateKeyword(
  db: DB,
  fx: Effects,
  accountId: string,
  id: string,
  input: { keyword?: string; wholeWord?: boolean },
): Promise<FilterKeywordRow> {
  const e = new Errors();
  if (input.keyword !== undefined) checkKeyword(e, input.keyword);
  e.check();
  const now = Date.now();
  const where = ownedBy(customFilterKeywords, id, accountId);
  const set: Partial<FilterKeywordRow> = { updatedAt: now };
  if (input.keyword !== undefined) set.keyword = input.keyword;
  if (input.wholeWord !== undefined) set.wholeWord = input.wholeWord;
  const [, rows] = await db.batch([db.update(customFilterKeywords).set(set).where(where), db.select().from(customFilterKeywords).where(where).limit(1)]);
  if (!rows[0]) throw notFound();
  changed(fx, accountId);
  return rows[0];
}

export async function deleteKeyword(db: DB, fx: Effects, accountId: string, id: string): Promise<void> {
  if (!(await deleteOwnRow(db, customFilterKeywords, id, accountId))) throw notFound();
  changed(fx, accountId);
}

// ---- status filters ----

export async function listFilterStatuses(db: DB, accountId: string, filterId: string): Promise<FilterStatusRow[]> {
  return inOwnFilter(db, accountId, filterId, statusesOf(db, accountId, filterId));
}

export async function getFilterStatus(db: DB, accountId: string, id: string): Promise<FilterStatusRow> {
  return ownRow(db, customFilterStatuses, id, accountId);
}

/** Adds a status the owner can see to a filter; an unknown or invisible status is the same 422 (nothing leaks). */
export async function addFilterStatus(db: DB, fx: Effects, accountId: string, filterId: string, statusId: string | null): Promise<FilterStatusRow> {
  const [f, st, dup, total] = await db.batch([
    ownFilter(db, accountId, filterId),
    db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.id, statusId ?? "0"), statusReadableBy(accountId)))
      .limit(1),
    db
      .select({ id: customFilterStatuses.id })
      .from(customFilterStatuses)
      .where(and(eq(customFilterStatuses.customFilterId, filterId), eq(customFilterStatuses.statusId, statusId ?? "0")))
      .limit(1),
    db.select({ n: count() }).from(customFilterStatuses).where(eq(customFilterStatuses.accountId, accountId)),
  ]);
  if (!f[0]) throw notFound();
  if (!statusId || !st[0]) throw validationFailed("Status must exist");
  if (dup[0]) throw validationFailed("Status has already been taken");
  if (Number(total[0]?.n ?? 0) >= MAX_FILTER_STATUSES) throw validationFailed(`You have reached the maximum of ${MAX_FILTER_STATUSES} filtered statuses`);
  const now = Date.now();
  const row: FilterStatusRow = { id: snowflake(now), customFilterId: filterId, accountId, statusId, createdAt: now };
  const res = await db.run(sql`INSERT OR IGNORE INTO custom_filter_statuses (id, custom_filter_id, account_id, status_id, created_at)
    SELECT ${padId(row.id)}, ${padId(filterId)}, ${padId(accountId)}, ${padId(statusId)}, ${now}
    WHERE EXISTS (SELECT 1 FROM custom_filters WHERE id = ${padId(filterId)} AND account_id = ${padId(accountId)})`);
  if (!res.meta.changes) throw validationFailed("Status has already been taken");
  changed(fx, accountId);
  return row;
}

export async function deleteFilterStatus(db: DB, fx: Effects, accountId: string, id: string): Promise<void> {
  const gone = await db
    .delete(customFilterStatuses)
    .where(ownedBy(customFilterStatuses, id, accountId))
    .returning({ id: customFilterStatuses.id });
  if (!gone.length) throw notFound();
  changed(fx, accountId);
}

// ---- v1: one keyword of a filter ----

export interface V1Filter {
  keyword: FilterKeywordRow;
  filter: FilterRow;
}

export interface V1Input {
  phrase?: string;
  context?: string[];
  irreversible?: boolean;
  wholeWord?: boolean;
  expiresIn?: number | null;
}

function selectV1(db: DB) {
  return db
    .select({ keyword: customFilterKeywords, filter: customFilters })
    .from(customFilterKeywords)
    .innerJoin(customFilters, eq(customFilters.id, customFilterKeywords.customFilterId));
}

export async function listV1Filters(db: DB, accountId: string): Promise<V1Filter[]> {
  return selectV1(db)
    .where(and(eq(customFilterKeywords.accountId, accountId), eq(customFilters.accountId, accountId)))
    .orderBy(asc(customFilterKeywords.id));
}

export async function getV1Filter(db: DB, accountId: string, keywordId: string): Promise<V1Filter> {
  const [row] = await selectV1(db)
    .where(and(eq(customFilterKeywords.id, keywordId), eq(customFilterKeywords.accountId, accountId), eq(customFilters.accountId, accountId)))
    .limit(1);
  if (!row) throw notFound();
  return row;
}

/** POST /api/v1/filters: a filter titled with the phrase, holding that one keyword. */
export async function createV1Filter(db: DB, fx: Effects, accountId: string, input: V1Input): Promise<V1Filter> {
  const e = new Errors();
  checkTitle(e, input.phrase, "Phrase");
  const context = normalizeContext(e, input.context);
  e.check();
  const have = await counts(db, accountId);
  if (have.filters >= MAX_FILTERS) throw validationFailed(`You have reached the maximum of ${MAX_FILTERS} filters`);
  checkKeywordRoom(have.keywords, 1);
  const now = Date.now();
  const filter: FilterRow = {
    id: snowflake(now),
    accountId,
    title: input.phrase!,
    context,
    action: input.irreversible ? "hide" : "warn",
    expiresAt: expiresAtFrom(input.expiresIn ?? null, now),
    createdAt: now,
    updatedAt: now,
  };
  const keyword = newKeyword(accountId, filter.id, input.phrase!, input.wholeWord ?? true, now);
  await db.batch([db.insert(customFilters).values(filter), insertKeyword(db, keyword)]);
  changed(fx, accountId);
  return { keyword, filter };
}

/**
 * PUT /api/v1/filters/:id: the phrase and whole_word change the keyword (always allowed); context, irreversible and
 * expires_in change its filter, which Mastodon refuses when the filter holds more than one keyword.
 */
export async function updateV1Filter(db: DB, fx: Effects, accountId: string, keywordId: string, input: V1Input): Promise<V1Filter> {
  // Not in a batch: D1 batch rows are keyed by column name, and the join's two `id` columns would collapse.
  const [cur] = await db
    .select({
      keyword: customFilterKeywords,
      filter: customFilters,
      siblings: sql<number>`(SELECT count(*) FROM custom_filter_keywords sk WHERE sk.custom_filter_id = ${customFilters.id})`,
    })
    .from(customFilterKeywords)
    .innerJoin(customFilters, eq(customFilters.id, customFilterKeywords.customFilterId))
    .where(and(eq(customFilterKeywords.id, keywordId), eq(customFilterKeywords.accountId, accountId), eq(customFilters.accountId, accountId)))
    .limit(1);
  if (!cur) throw notFound();
  const many = Number(cur.siblings) > 1;
  const e = new Errors();
  if (input.phrase !== undefined) checkTitle(e, input.phrase, "Phrase");
  const context = input.context !== undefined ? normalizeContext(e, input.context) : cur.filter.context;
  e.check();
  const now = Date.now();
  const action: FilterAction = input.irreversible === undefined ? cur.filter.action : input.irreversible ? "hide" : "warn";
  const expiresAt = input.expiresIn !== undefined ? expiresAtFrom(input.expiresIn, now) : cur.filter.expiresAt;
  const filterChanged = JSON.stringify(context) !== JSON.stringify(cur.filter.context) || action !== cur.filter.action || expiresAt !== cur.filter.expiresAt;
  if (filterChanged && many) throw new ApiError(422, DEPRECATED_MULTIPLE_KEYWORDS);
  const keyword: FilterKeywordRow = {
    ...cur.keyword,
    keyword: input.phrase ?? cur.keyword.keyword,
    wholeWord: input.wholeWord ?? cur.keyword.wholeWord,
    updatedAt: now,
  };
  // A filter of one keyword keeps its title equal to the phrase, as a filter made through v1 starts.
  const title = !many && input.phrase !== undefined ? input.phrase : cur.filter.title;
  const filter: FilterRow = {
    ...cur.filter,
    title,
    context,
    action,
    expiresAt,
    updatedAt: filterChanged || title !== cur.filter.title ? now : cur.filter.updatedAt,
  };
  await db.batch([
    db
      .update(customFilterKeywords)
      .set({ keyword: keyword.keyword, wholeWord: keyword.wholeWord, updatedAt: now })
      .where(ownedBy(customFilterKeywords, keywordId, accountId)),
    db
      .update(customFilters)
      .set({ title, context, action, expiresAt, updatedAt: filter.updatedAt })
      .where(and(eq(customFilters.id, cur.filter.id), eq(customFilters.accountId, accountId))),
  ]);
  changed(fx, accountId);
  return { keyword, filter };
}

/** DELETE /api/v1/filters/:id removes that keyword only; its filter stays (Mastodon: use v2 to delete a filter). */
export const deleteV1Filter = deleteKeyword;
