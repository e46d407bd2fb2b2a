// Search: accounts by username or display-name word prefix (the FTS5 index of migrations/0030_account_search.sql) and
// by exact acct or URL; hashtags by name prefix; statuses by URL, or full-text through the FTS5 index
// (migrations/0018_status_search.sql, written by services/statuses/search-index.ts)
// under Mastodon's rules: what the viewer wrote or interacted with, plus public statuses of `indexable` accounts, with
// Mastodon's operators (lib/text/search-query.ts). Everything honours blocks, mutes and domain blocks (spec: search follows
// blocking and muting rules). User text reaches SQL only as bound values: index range bounds, and FTS5 queries in
// which every word (or an account search's whole text) is a quoted string (security A16, A17). Nothing is fetched
// from other servers here (security D9): resolving remote accounts and statuses belongs to federation.
import { and, asc, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, follows, statuses } from "../../db/schema/index";
import type { Config } from "../../env";
import { padId, snowflakeFloor, unpadId } from "../../lib/text/ids";
import { ftsMatch, parseSearchQuery, type ParsedSearch } from "../../lib/text/search-query";
import type { AccountRow } from "../../db/schema";
import { hiddenAuthorFor, statusReadableBy } from "../../policy/visibility";
import { localStatusOfUrl } from "../../entities/urls";

export type AccountQuery = { kind: "acct"; username: string; domain: string | null } | { kind: "url"; url: string } | { kind: "text"; text: string };

/** What a query names: an exact account (`@user@domain`, `user@domain`), a URL, or free text. */
export function readAccountQuery(cfg: Config, q: string): AccountQuery {
  const t = q.trim();
  if (/^https?:\/\//i.test(t)) return { kind: "url", url: t };
  const m = /^@?([A-Za-z0-9_]+)@([A-Za-z0-9.-]+(?::\d+)?)$/.exec(t);
  if (m) {
    const [, username = "", host = ""] = m; // both groups always participate
    const domain = host.toLowerCase() === cfg.domain.toLowerCase() ? null : host.toLowerCase();
    return { kind: "acct", username, domain };
  }
  return { kind: "text", text: t.replace(/^@/, "") };
}

/** A local profile or actor URL → username. */
function localUsernameFromUrl(cfg: Config, url: string): string | null {
  try {
    const u = new URL(url);
    if (u.host.toLowerCase() !== cfg.domain.toLowerCase()) return null;
    const m = /^\/(?:users\/|@)([A-Za-z0-9_]+)\/?$/.exec(u.pathname);
    return m?.[1] ?? null;
  } catch {
    return null;
  }
}

export interface SearchOptions {
  viewerId: string | null;
  limit: number;
  offset: number;
  following: boolean;
  accountId: string | null;
  /** Statuses only: newer than min_id, older than max_id. */
  minId?: string | null;
  maxId?: string | null;
}

/**
 * Free-text account candidates looked at per arm (username prefix, display-name word prefix): the search orders and
 * pages among at most this many accounts whose username starts with the text (taken in username order, so an exact
 * username always comes first) plus this many whose display name has a word starting with it (in account-id order,
 * oldest first). Pages within the first ACCOUNT_CANDIDATES results share one candidate set, so they page
 * consistently; deeper pages widen it to 2 × (limit + offset) per arm, at most ACCOUNT_CANDIDATES_MAX. For a user: a
 * very common prefix ("a", "jo") may not show every account it matches, and the order (exact username, followed,
 * local, followers) is among the candidates, so a much-followed account past the cap is not ranked in; a longer
 * prefix narrows the set. `following=true` is exact instead: its candidates are all the accounts the viewer follows.
 */
const ACCOUNT_CANDIDATES = 200;
const ACCOUNT_CANDIDATES_MAX = 2_000;

/**
 * The free text as ONE quoted FTS5 string whose last word is a prefix (`"zed hop"*` finds "Zed Hopper", "Émile" finds
 * "emile…"): every `"` doubled, so user text never reaches FTS5's syntax (security A16, A17). Null when FTS5's
 * tokenizer would find no word in it (unicode61 words are letters, digits and private-use characters).
 */
export function displayNamePrefixMatch(text: string): string | null {
  if (!/[\p{L}\p{N}\p{Co}]/u.test(text)) return null;
  return `"${text.replaceAll('"', '""')}"*`;
}

/**
 * Accounts for a search (`/api/v2/search`): an exact `user@domain`, a profile or actor URL, or free text (a prefix of
 * the username, or of any word of the display name; `user@partial.dom` is a username prefix). Mastodon's order: the
 * exact username first, then accounts the viewer follows, local ones, most followers. ONE statement.
 *
 * Free text reads candidates, never the table (issue 12: the `LIKE` conditions scanned every account): a range of the
 * `accounts_username_domain` expression index on lower(username) (`>= p AND < p || char(0x10FFFF)`: BINARY compares
 * UTF-8 bytes, so that is exactly the strings starting with p), and the display-name words from the FTS5 index
 * `accounts_fts` (migrations/0030_account_search.sql), each capped (ACCOUNT_CANDIDATES); with `following=true`, the
 * viewer's follows (`follows_pair`), each tested against the same range and probed in FTS5 by rowid. Each candidate
 * is read by primary key and kept unless suspended or hidden from the viewer (blocks both ways, mutes, domain
 * blocks), then sorted: the rows follow the page (or the viewer's follows), not the number of accounts.
 */
export function accountSearchQuery(db: DB, cfg: Config, q: string, o: SearchOptions) {
  const aq = readAccountQuery(cfg, q);
  const conds: SQL[] = [sql`${accounts.suspendedAt} IS NULL`];
  // No constant ORDER BY terms: SQLite reads an integer literal there as a column number.
  const order: SQL[] = [];
  const v = o.viewerId;
  if (o.following && !v) return null;
  const pv = v ? padId(v) : null;
  const followed = sql`EXISTS (SELECT 1 FROM ${follows} WHERE ${follows.accountId} = ${pv} AND ${follows.targetAccountId} = ${accounts.id})`;
  let candidates: SQL | null = null;
  if (aq.kind === "acct") {
    conds.push(sql`lower(${accounts.username}) = ${aq.username.toLowerCase()}`);
    conds.push(aq.domain ? sql`lower(${accounts.domain}) = ${aq.domain}` : sql`${accounts.domain} IS NULL`);
  } else if (aq.kind === "url") {
    const local = localUsernameFromUrl(cfg, aq.url);
    if (local) conds.push(sql`lower(${accounts.username}) = ${local.toLowerCase()} AND ${accounts.domain} IS NULL`);
    else conds.push(sql`(${accounts.uri} = ${aq.url} OR ${accounts.url} = ${aq.url})`);
  } else {
    // Control characters (a NUL ends a string in SQLite's C API) become spaces, as in lib/text/search-query.ts.
    const raw = aq.text.split("@")[0]?.replace(/[\u0000-\u001f\u007f]/g, " ");
    if (!raw) return null;
    const p = raw.toLowerCase();
    const match = displayNamePrefixMatch(raw);
    if (o.following && pv) {
      const byName = match
        ? sql` OR EXISTS (SELECT 1 FROM accounts_fts WHERE accounts_fts MATCH ${match} AND accounts_fts.rowid = CAST(fa.id AS INTEGER))`
        : sql``;
      candidates = sql`SELECT fo.target_account_id FROM ${follows} fo CROSS JOIN ${accounts} fa ON fa.id = fo.target_account_id
        WHERE fo.account_id = ${pv} AND ((lower(fa.username) >= ${p} AND lower(fa.username) < ${p} || char(1114111))${byName})`;
    } else {
      const cap = Math.min(ACCOUNT_CANDIDATES_MAX, Math.max(ACCOUNT_CANDIDATES, 2 * (o.limit + o.offset)));
      const arms: SQL[] = [
        sql`SELECT un.id FROM (SELECT ua.id AS id FROM ${accounts} ua WHERE lower(ua.username) >= ${p} AND lower(ua.username) < ${p} || char(1114111)
          ORDER BY lower(ua.username) LIMIT ${cap}) un`,
      ];
      if (match)
        arms.push(sql`SELECT printf('%020d', dn.rowid) FROM (SELECT accounts_fts.rowid AS rowid FROM accounts_fts WHERE accounts_fts MATCH ${match}
          ORDER BY accounts_fts.rowid LIMIT ${cap}) dn`);
      candidates = sql.join(arms, sql` UNION ALL `);
    }
    order.push(sql`(lower(${accounts.username}) = ${p}) DESC`);
  }
  if (v) {
    conds.push(sql`NOT ${hiddenAuthorFor(v, sql`${accounts.id}`)}`);
    if (o.following) {
      if (!candidates) conds.push(followed);
    } else order.push(sql`${followed} DESC`);
  }
  // With candidates, the other conditions are one opaque `+(…)` term: SQLite reads the candidates' ephemeral IN index,
  // each account by primary key, and no other index (accounts_domain for local ones) can drive the query instead.
  const where = candidates ? and(sql`${accounts.id} IN (${candidates})`, sql`+(${and(...conds)})`) : and(...conds);
  return db
    .select()
    .from(accounts)
    .where(where)
    .orderBy(...order, sql`${accounts.domain} IS NOT NULL`, desc(accounts.followersCount), asc(accounts.id))
    .limit(o.limit)
    .offset(o.offset);
}

export async function searchAccounts(db: DB, cfg: Config, q: string, o: SearchOptions): Promise<AccountRow[]> {
  const query = accountSearchQuery(db, cfg, q, o);
  if (!query) return [];
  try {
    return await query;
  } catch (e) {
    // The text reaches FTS5 as one quoted string, so FTS5 has nothing to choke on; should it still, nothing is found rather than a 500.
    const msg = `${(e as Error)?.message ?? e} ${(e as Error)?.cause ?? ""}`;
    if (/fts5/i.test(msg)) {
      console.warn("account search failed", msg.slice(-200));
      return [];
    }
    throw e;
  }
}

/** A local status URL (/@user/ID or /users/user/statuses/ID), or any status's uri/url: the status, if the viewer may see it. */
async function statusByUrl(db: DB, cfg: Config, url: string, o: SearchOptions & { viewerId: string }): Promise<string[]> {
  const localId = localStatusOfUrl(cfg, url)?.id ?? null;
  const conds: SQL[] = [
    statusReadableBy(o.viewerId),
    isNull(statuses.reblogOfId),
    // By uri, or by a remote status's page URL: each through its index (statuses_uri; statuses_url, whose conditions
    // the second term repeats so that SQLite may use it).
    localId
      ? eq(statuses.id, localId)
      : sql`(${statuses.uri} = ${url} OR (${statuses.url} = ${url} AND ${statuses.url} <> ${statuses.uri} AND ${statuses.local} = 0))`,
    sql`(${statuses.accountId} = ${padId(o.viewerId)} OR NOT ${hiddenAuthorFor(o.viewerId, statuses.accountId)})`,
  ];
  if (o.accountId) conds.push(eq(statuses.accountId, o.accountId));
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(...conds))
    .limit(1)
    .offset(o.offset);
  return rows.map((r) => r.id);
}

/** The first status id at a time (ms, clamped so that ids stay int64 and non-negative). */
const idAt = (ms: number) => BigInt(snowflakeFloor(Math.min(ms, 2 ** 47 - 1)));

/** The bounds of `statuses.id` the query and min_id/max_id allow: [gte, lt). */
function idBounds(p: ParsedSearch, o: SearchOptions): { gte: bigint | null; lt: bigint | null } {
  let gte: bigint | null = o.minId ? BigInt(o.minId) + 1n : null;
  let lt: bigint | null = o.maxId ? BigInt(o.maxId) : null;
  for (const d of p.dates) {
    if (d.negated) continue;
    if (d.lo !== null) {
      const v = idAt(d.lo);
      if (gte === null || v > gte) gte = v;
    }
    if (d.hi !== null) {
      const v = idAt(d.hi);
      if (lt === null || v < lt) lt = v;
    }
  }
  return { gte, lt };
}

/** `col >= gte` and `col < lt` (padded status ids, `col` a status id column) for the bounds given, as conditions. */
function idRange(col: SQL, gte: bigint | null, lt: bigint | null): SQL[] {
  const out: SQL[] = [];
  if (gte !== null) out.push(sql`${col} >= ${padId(gte.toString())}`);
  if (lt !== null) out.push(sql`${col} < ${padId(lt.toString())}`);
  return out;
}

/** idRange's conditions, each after an AND, to follow a WHERE clause. */
const andIdRange = (col: SQL, gte: bigint | null, lt: bigint | null) => sql.join(idRange(col, gte, lt).map((c) => sql` AND ${c}`));

const MAX_RESULT_WINDOW = 10_000;
const MAX_ID = 2n ** 63n - 1n;

const MEDIA_TYPES: Record<string, string> = { image: "image", video: "video", audio: "audio" };

/** has: (Mastodon's Status#searchable_properties). An unknown value matches nothing. */
function hasCondition(value: string): SQL {
  if (value === "media") return sql`EXISTS (SELECT 1 FROM media_attachments ma WHERE ma.status_id = statuses.id)`;
  if (MEDIA_TYPES[value]) return sql`EXISTS (SELECT 1 FROM media_attachments ma WHERE ma.status_id = statuses.id AND ma.type = ${MEDIA_TYPES[value]})`;
  if (value === "poll") return sql`statuses.poll_id IS NOT NULL`;
  if (value === "link") return sql`EXISTS (SELECT 1 FROM status_preview_cards spc WHERE spc.status_id = statuses.id)`;
  if (value === "embed")
    return sql`EXISTS (SELECT 1 FROM status_preview_cards spc JOIN preview_cards pc ON pc.id = spc.preview_card_id WHERE spc.status_id = statuses.id AND pc.type = 'video')`;
  return sql`0`;
}

function isCondition(value: string): SQL {
  if (value === "reply") return sql`statuses.in_reply_to_id IS NOT NULL`;
  if (value === "sensitive") return sql`statuses.sensitive = 1`;
  return sql`0`;
}

/** from: the viewer, a local account, or a known remote one, as the author's id; an unknown account is NULL (nothing). */
function fromAccount(cfg: Config, value: string | null, pv: string): SQL {
  if (value === "me") return sql`${pv}`;
  if (value === null) return sql`NULL`;
  const [username, domain] = value.split("@") as [string, string | undefined];
  const local = !domain || domain.toLowerCase() === cfg.domain.toLowerCase();
  const where = local
    ? sql`lower(a.username) = ${username.toLowerCase()} AND a.domain IS NULL`
    : sql`lower(a.username) = ${username.toLowerCase()} AND lower(a.domain) = ${domain!.toLowerCase()}`;
  return sql`(SELECT a.id FROM accounts a WHERE ${where} LIMIT 1)`;
}

/** A clause's condition, or its negation (NULL, e.g. a status without a language, counts as "not matching"). */
const clause = (cond: SQL, negated: boolean) => (negated ? sql`NOT coalesce((${cond}), 0)` : sql`(${cond})`);

/**
 * The statuses in viewer `pv`'s library (Mastodon's `searchable_by`), each set an index range of the viewer's own rows:
 * what they wrote (statuses_account_id), the originals they boosted (the same range), were mentioned in
 * (mentions_account), favourited (favourites_pair), bookmarked (bookmarks_pair) and voted in (poll_votes_account, the
 * status's current poll). Its size is the viewer's, never the database's.
 */
function librarySets(pv: string): SQL {
  // One range for own statuses and boosts (D1 caps a compound SELECT at 5 terms).
  return sql`SELECT coalesce(s.reblog_of_id, s.id) AS id FROM statuses s WHERE s.account_id = ${pv}
    UNION ALL SELECT m.status_id FROM mentions m WHERE m.account_id = ${pv}
    UNION ALL SELECT f.status_id FROM favourites f WHERE f.account_id = ${pv}
    UNION ALL SELECT b.status_id FROM bookmarks b WHERE b.account_id = ${pv}
    UNION ALL SELECT p.status_id FROM poll_votes v CROSS JOIN polls p ON p.id = v.poll_id CROSS JOIN statuses s ON s.id = p.status_id AND s.poll_id = v.poll_id
      WHERE v.account_id = ${pv}`;
}

/**
 * Public matches looked at per request, per result wanted (limit + offset): the `indexable` side of a search is the
 * newest PUBLIC_SCAN_PER_RESULT × (limit + offset) candidates below max_id (at most PUBLIC_SCAN_MAX: FTS matches, or
 * with only operators the author's, the hashtag's or all statuses, publicWalk), not every match. For a user: a word
 * found in many statuses, or an operator few match (has:poll alone), may not find an older public post beyond that
 * window (more words, `from:`, a hashtag, `before:` or paging with max_id narrow or move the window); the viewer's own
 * library is always searched whole. Mastodon's Elasticsearch search is capped likewise (by relevance and its result
 * window).
 */
const PUBLIC_SCAN_PER_RESULT = 20;
const PUBLIC_SCAN_MAX = 5_000;

/**
 * Full-text status search for a signed-in viewer, newest first (Mastodon orders by id): ONE statement. With words or
 * phrases, the candidates are the viewer's library (librarySets, each status probed in the FTS5 index by rowid) and
 * the newest public matches (a capped walk of the index, PUBLIC_SCAN_PER_RESULT); each is joined to its status by
 * primary key and kept if the viewer may find and see it. So its rows follow the viewer's library and the page, not
 * the number of statuses or matches; with only operators, the public candidates are a capped walk of another index
 * (publicWalk). Blocks, mutes, domain blocks and silenced authors the viewer does not follow are left out (Mastodon's
 * StatusFilter), and the REST visibility rule applies on top. Null when the query asks for nothing (or for an empty id
 * range).
 */
export function statusSearchQuery(cfg: Config, q: string, o: SearchOptions & { viewerId: string }): SQL | null {
  const p = parseSearchQuery(q);
  const { match, exclude } = ftsMatch(p.text);
  const pv = padId(o.viewerId);
  const filters = p.tags.length + p.has.length + p.is.length + p.languages.length + p.from.length + p.dates.length;
  if (!match && !exclude && !filters && p.scope === "all") return null;

  const own = sql`statuses.account_id = ${pv}`;
  // What the viewer may see, and the operators (who may FIND a status is decided by the candidate arms below).
  const conds: SQL[] = [
    statusReadableBy(o.viewerId),
    sql`(${own} OR NOT ${hiddenAuthorFor(o.viewerId, statuses.accountId)})`,
    sql`(${own} OR NOT EXISTS (SELECT 1 FROM accounts sa WHERE sa.id = statuses.account_id AND sa.silenced_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM follows sfo WHERE sfo.account_id = ${pv} AND sfo.target_account_id = statuses.account_id)))`,
  ];
  for (const t of p.tags)
    conds.push(
      clause(sql`EXISTS (SELECT 1 FROM status_tags st JOIN tags tg ON tg.id = st.tag_id WHERE st.status_id = statuses.id AND tg.name = ${t.value})`, t.negated),
    );
  for (const h of p.has) conds.push(clause(hasCondition(h.value), h.negated));
  for (const h of p.is) conds.push(clause(isCondition(h.value), h.negated));
  for (const l of p.languages) conds.push(clause(sql`statuses.language = ${l.value}`, l.negated));
  for (const f of p.from) conds.push(clause(sql`statuses.account_id = ${fromAccount(cfg, f.value, pv)}`, f.negated));
  for (const d of p.dates) {
    if (!d.negated) continue; // the others are id bounds
    const lo = d.lo !== null ? sql`statuses.id >= ${padId(idAt(d.lo).toString())}` : sql`1`;
    const hi = d.hi !== null ? sql`statuses.id < ${padId(idAt(d.hi).toString())}` : sql`1`;
    conds.push(clause(sql`${lo} AND ${hi}`, true));
  }
  const { gte, lt } = idBounds(p, o);
  if ((gte !== null && lt !== null && gte >= lt) || (gte !== null && gte > MAX_ID)) return null;

  // Candidates: the viewer's library and a capped walk of public statuses (Mastodon's searchable_by and
  // PublicStatusesIndex), each arm holding only what the viewer may find, so the outer conditions need not test it.
  const arms: SQL[] = [];
  if (p.scope !== "public") {
    const inFts = match
      ? sql`AND EXISTS (SELECT 1 FROM statuses_fts WHERE statuses_fts MATCH ${match} AND statuses_fts.rowid = CAST(lib.id AS INTEGER))`
      : sql``;
    arms.push(sql`SELECT lib.id AS id FROM (${librarySets(pv)}) lib WHERE lib.id IS NOT NULL${andIdRange(sql`lib.id`, gte, lt)} ${inFts}`);
  }
  if (p.scope !== "library") {
    const cap = Math.min(PUBLIC_SCAN_MAX, PUBLIC_SCAN_PER_RESULT * (o.limit + o.offset));
    arms.push(sql`SELECT ps.id AS id FROM (${publicWalk(cfg, p, o, match, gte, lt, cap)}) pub
      CROSS JOIN statuses ps ON ps.id = pub.id
      WHERE ps.visibility = 'public' AND EXISTS (SELECT 1 FROM accounts ia WHERE ia.id = ps.account_id AND ia.indexable = 1)`);
  }
  if (o.accountId) conds.push(sql`statuses.account_id = ${padId(o.accountId)}`);
  conds.push(...idRange(sql`statuses.id`, gte, lt));
  if (exclude) conds.push(sql`statuses.id NOT IN (SELECT printf('%020d', rowid) FROM statuses_fts WHERE statuses_fts MATCH ${exclude})`);
  // `IN`: SQLite reads the candidates' ephemeral index (deduplicated, sorted) backwards, each status by primary key,
  // and stops at the page: only the statuses up to the page's last are tested, not every candidate. The unary `+`
  // makes the conditions one opaque term, so SQLite cannot drive the query by another index instead (reblog_of_id
  // IS NULL by statuses_reblog_of, account_id or from: by statuses_account_id, is:reply by statuses_in_reply_to):
  // the plan is the same whatever the statistics.
  return sql`SELECT statuses.id AS id FROM statuses
    WHERE statuses.id IN (${sql.join(arms, sql` UNION ALL `)}) AND +(statuses.reblog_of_id IS NULL AND ${and(...conds)})
    ORDER BY statuses.id DESC LIMIT ${o.limit} OFFSET ${o.offset}`;
}

/**
 * The newest `cap` public candidates below the bounds, as padded status ids (`id`): the FTS5 index's matches when the
 * query has words; else, with only operators, the statuses of the author it names (`from:` or the account searched
 * in), else of its first hashtag (status_tags_tag), else the newest statuses. Each is an index range read backwards
 * and cut at `cap`, so an operator that few statuses match costs the window, never the table.
 */
function publicWalk(
  cfg: Config,
  p: ParsedSearch,
  o: SearchOptions & { viewerId: string },
  match: string | null,
  gte: bigint | null,
  lt: bigint | null,
  cap: number,
): SQL {
  if (match) {
    // The bounds on the FTS rowid let FTS5 skip what is out of range; the id goes in as TEXT (exact).
    const ftsBounds: SQL[] = [];
    if (gte !== null) ftsBounds.push(sql`AND statuses_fts.rowid >= CAST(${gte.toString()} AS INTEGER)`);
    if (lt !== null) ftsBounds.push(sql`AND statuses_fts.rowid < CAST(${lt.toString()} AS INTEGER)`);
    return sql`SELECT printf('%020d', statuses_fts.rowid) AS id FROM statuses_fts
      WHERE statuses_fts MATCH ${match} ${sql.join(ftsBounds, sql` `)} ORDER BY statuses_fts.rowid DESC LIMIT ${cap}`;
  }
  const from = p.from.find((f) => !f.negated);
  const author = o.accountId ? sql`${padId(o.accountId)}` : from ? fromAccount(cfg, from.value, padId(o.viewerId)) : null;
  if (author) return sql`SELECT s.id AS id FROM statuses s WHERE s.account_id = ${author}${andIdRange(sql`s.id`, gte, lt)} ORDER BY s.id DESC LIMIT ${cap}`;
  const tag = p.tags.find((t) => !t.negated);
  if (tag)
    return sql`SELECT st.status_id AS id FROM status_tags st WHERE st.tag_id = (SELECT tg.id FROM tags tg WHERE tg.name = ${tag.value})
      ${andIdRange(sql`st.status_id`, gte, lt)} ORDER BY st.status_id DESC LIMIT ${cap}`;
  return sql`SELECT newest.id AS id FROM statuses newest WHERE 1${andIdRange(sql`newest.id`, gte, lt)} ORDER BY newest.id DESC LIMIT ${cap}`;
}

async function fullTextStatusIds(db: DB, cfg: Config, q: string, o: SearchOptions & { viewerId: string }): Promise<string[]> {
  const query = statusSearchQuery(cfg, q, o);
  if (!query) return [];
  try {
    const rows = await db.all<{ id: string }>(query);
    return rows.map((r) => unpadId(r.id));
  } catch (e) {
    // Every string is quoted, so FTS5 has nothing to choke on; should it still, a search finds nothing rather than 500.
    if (/fts5/i.test(String((e as Error)?.message ?? e))) {
      console.warn("status search failed", String((e as Error)?.message ?? e).slice(0, 200));
      return [];
    }
    throw e;
  }
}

/**
 * Status ids matching q, newest first. Signed-out visitors get none (Mastodon requires a login for this). A URL finds
 * the status it names (if visible); anything else is a full-text search (`fullTextStatusIds`).
 */
export async function searchStatusIds(db: DB, cfg: Config, q: string, o: SearchOptions): Promise<string[]> {
  const viewerId = o.viewerId;
  if (!viewerId) return [];
  const t = q.trim();
  // Elasticsearch's max_result_window (10,000) bounds Mastodon's paging the same way.
  if (!t || o.offset + o.limit > MAX_RESULT_WINDOW) return [];
  if (/^https?:\/\//i.test(t)) return statusByUrl(db, cfg, t, { ...o, viewerId });
  return fullTextStatusIds(db, cfg, t, { ...o, viewerId });
}

export type DirectoryOrder = "active" | "new";

/** How deep the directory pages newest first (offset + limit), as search's result window. */
const DIRECTORY_WINDOW = 2_000;
/** The newest statuses whose remote authors the most-active directory lists (local accounts are all listed). */
const ACTIVE_WINDOW = 400;

/**
 * The profile directory: discoverable, unsuspended accounts, minus those the viewer hides or is blocked by; most
 * active: local ones all, remote ones among the newest statuses' authors (ACTIVE_WINDOW).
 */
export async function directory(
  db: DB,
  o: { viewerId: string | null; order: DirectoryOrder; local: boolean; limit: number; offset: number },
): Promise<AccountRow[]> {
  // Newest first (not local) walks accounts_discoverable, whose condition must be written as its WHERE is; elsewhere
  // the unary + keeps the planner off it (the local range and the sort of the active window are narrower).
  const walk = o.order === "new" && !o.local;
  const conds: SQL[] = [
    walk ? sql`${accounts.discoverable} = 1` : sql`+${accounts.discoverable} = 1`,
    isNull(accounts.suspendedAt),
    isNull(accounts.silencedAt),
    isNull(accounts.movedToAccountId),
    eq(accounts.memorial, false),
  ];
  if (o.local) conds.push(isNull(accounts.domain));
  if (o.viewerId) conds.push(sql`NOT ${hiddenAuthorFor(o.viewerId, sql`${accounts.id}`)}`);
  // Anyone may ask, so what a page reads is bounded. Newest first is accounts_discoverable read backwards (an
  // account's id is made from its creation time, remote ones from their `published`), stopping at the page, as far as
  // DIRECTORY_WINDOW accounts. Most active: the local accounts (accounts_domain's NULL range) and the authors of the
  // ACTIVE_WINDOW newest statuses, sorted by their last status. Sorting every discoverable account read the whole table.
  if (o.order === "new") {
    if (o.offset + o.limit > DIRECTORY_WINDOW) return [];
  } else if (!o.local) {
    conds.push(
      sql`(${accounts.domain} IS NULL OR ${accounts.id} IN (SELECT ds.account_id FROM (SELECT sd.account_id FROM statuses sd ORDER BY sd.id DESC LIMIT ${ACTIVE_WINDOW}) ds))`,
    );
  }
  const order = o.order === "new" ? [desc(accounts.id)] : [sql`${accounts.lastStatusAt} IS NULL`, desc(accounts.lastStatusAt), desc(accounts.id)];
  return db
    .select()
    .from(accounts)
    .where(and(...conds))
    .orderBy(...order)
    .limit(o.limit)
    .offset(o.offset);
}
