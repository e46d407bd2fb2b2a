// Timeline pages: each is ONE query that yields the page's status ids (newest first) using an index in the page's
// order (home_feed / list_feed primary keys, statuses_public, status_tags_tag, mentions_account, bookmarks_account,
// favourites_account), with hidden authors filtered before the page is cut. Rendering is renderStatuses' one batch.
import { and, asc, desc, eq, gt, lt, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { ownedBy } from "../../db/owned";
import { bookmarks, favourites, lists } from "../../db/schema/index";
import { padId, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { cursorSql } from "../../db/keyset";
import { hiddenAuthorFor } from "../../policy/visibility";
import { valueList } from "../../db/id-list";
import { quotedStatusIdOf } from "./quoted";

export interface PageIds {
  /** Status ids, newest first. */
  ids: string[];
  /** Pagination cursors (newest, oldest) and whether the page was full, before any rendering drops. */
  first?: string;
  last?: string;
  full: boolean;
  /**
   * The other statuses the page shows, when its query read them (`rb`: the boosted status, `qt`: the status quoted by
   * the entry or by what it boosts): renderStatuses then loads them without re-deriving them from the ids.
   */
  related?: string[];
}

type PageRow = { id: string; rb?: string | null; qt?: string | null };

function toPage(rows: PageRow[], ascending: boolean, limit: number): PageIds {
  const ids = rows.map((r) => unpadId(String(r.id)));
  if (ascending) ids.reverse();
  const page: PageIds = { ids, first: ids[0], last: ids[ids.length - 1], full: ids.length >= limit };
  if (rows.length && "qt" in rows[0]!) {
    const related = new Set<string>();
    for (const r of rows) {
      if (r.rb) related.add(unpadId(String(r.rb)));
      if (r.qt) related.add(unpadId(String(r.qt)));
    }
    page.related = [...related];
  }
  return page;
}

/** The status an entry (or the status it boosts) quotes: `qt` of PageRow; an index seek that reads no row when none. */
function quotedOf(idCol: string): SQL {
  return sql`${quotedStatusIdOf(sql.raw(idCol))} AS qt`;
}

/** Entries whose author, or (for boosts) whose boosted author, the viewer has hidden. */
function hiddenEntry(viewerId: string, authorCol: string, reblogCol: string): SQL {
  return sql`(${hiddenAuthorFor(viewerId, sql.raw(authorCol))}
    OR (${sql.raw(reblogCol)} IS NOT NULL AND ${hiddenAuthorFor(viewerId, sql.raw(`(SELECT ro.account_id FROM statuses ro WHERE ro.id = ${reblogCol})`))}))`;
}

export interface PageQuery {
  query: SQL;
  ascending: boolean;
}

async function run(db: DB, q: PageQuery, limit: number): Promise<PageIds> {
  return toPage(await db.all<PageRow>(q.query), q.ascending, limit);
}

export function homeTimelineQuery(viewerId: string, page: Page): PageQuery {
  const c = cursorSql(sql.raw("h.status_id"), page);
  const query = sql`SELECT h.status_id AS id, h.reblog_of_id AS rb, ${quotedOf("coalesce(h.reblog_of_id, h.status_id)")} FROM home_feed h
    WHERE h.account_id = ${padId(viewerId)}${c.cond} AND NOT ${hiddenEntry(viewerId, "h.author_id", "h.reblog_of_id")}
    ORDER BY h.status_id ${c.dir} LIMIT ${page.limit}`;
  return { query, ascending: c.ascending };
}

export const homeTimeline = (db: DB, viewerId: string, page: Page) => run(db, homeTimelineQuery(viewerId, page), page.limit);

export interface PublicFilter {
  local?: boolean;
  remote?: boolean;
  onlyMedia?: boolean;
  /** The viewer's chosen languages (Mastodon's language_scope), when set. */
  languages?: string[] | null;
  /** Replies to others are left out of the public timeline, kept in hashtag timelines (Mastodon). */
  withReplies?: boolean;
}

/**
 * Conditions on `s` shared by the public and hashtag timelines (Mastodon's PublicFeed scopes); only_media is each
 * timeline's own (the public one walks the attachments, a hashtag's tests each status).
 */
function publicConds(viewerId: string | null, f: PublicFilter): SQL {
  const parts: SQL[] = [
    // `+` keeps the planner on the ordered index instead of one on reblog_of_id.
    sql`+s.reblog_of_id IS NULL`,
    sql`NOT EXISTS (SELECT 1 FROM accounts pa WHERE pa.id = s.account_id AND (pa.suspended_at IS NOT NULL OR pa.silenced_at IS NOT NULL))`,
  ];
  if (!f.withReplies) parts.push(sql`(+s.in_reply_to_id IS NULL OR s.in_reply_to_account_id = s.account_id)`);
  if (f.languages?.length) parts.push(sql`s.language IN ${valueList(f.languages)}`);
  if (viewerId) parts.push(sql`NOT ${hiddenAuthorFor(viewerId, sql.raw("s.account_id"))}`);
  return sql.join(parts, sql` AND `);
}

/** Which values of statuses.local to read: local only, remote only, or both (each its own ordered index range). */
function localities(f: PublicFilter): number[] {
  if (f.local && !f.remote) return [1];
  if (f.remote && !f.local) return [0];
  return [1, 0];
}

export const publicTimeline = (db: DB, viewerId: string | null, f: PublicFilter, page: Page) => run(db, publicTimelineQuery(viewerId, f, page), page.limit);

export function publicTimelineQuery(viewerId: string | null, f: PublicFilter, page: Page): PageQuery {
  if (f.onlyMedia) return publicMediaQuery(viewerId, f, page);
  const c = cursorSql(sql.raw("s.id"), page);
  const conds = publicConds(viewerId, f);
  // statuses_public is (visibility, local, id): one ordered range per locality. As arms of one compound SELECT with the
  // ORDER BY and LIMIT outside, SQLite merges the two ranges (MERGE (UNION ALL)) pulling a row at a time from whichever
  // is ahead, so a page reads the statuses it shows (and one more per range), not a page from each range.
  const parts = localities(f).map(
    (local) => sql`SELECT s.id AS id, ${quotedOf("s.id")} FROM statuses s WHERE s.visibility = 'public' AND s.local = ${local}${c.cond} AND ${conds}`,
  );
  return { query: sql`${sql.join(parts, sql` UNION ALL `)} ORDER BY id ${c.dir} LIMIT ${page.limit}`, ascending: c.ascending };
}

/**
 * only_media: the attachments by status (media_status), newest first, each status by its primary key. A walk of the
 * public statuses read every one without media to find those with some (all of them, open to anyone, where few
 * statuses have media); attachments are mostly on public statuses, so this walk follows the page. DISTINCT: a status
 * with four attachments is one entry.
 */
function publicMediaQuery(viewerId: string | null, f: PublicFilter, page: Page): PageQuery {
  const c = cursorSql(sql.raw("ma.status_id"), page);
  const locs = localities(f);
  const local = locs.length === 1 ? sql` AND s.local = ${locs[0]}` : sql``;
  const query = sql`SELECT DISTINCT s.id AS id, ${quotedOf("s.id")} FROM media_attachments ma CROSS JOIN statuses s ON s.id = ma.status_id
    WHERE ma.status_id IS NOT NULL${c.cond} AND s.visibility = 'public'${local} AND ${publicConds(viewerId, f)}
    ORDER BY ma.status_id ${c.dir} LIMIT ${page.limit}`;
  return { query, ascending: c.ascending };
}

export interface TagFilter extends PublicFilter {
  tag: string;
  any?: string[];
  all?: string[];
  none?: string[];
}

export const tagTimeline = (db: DB, viewerId: string | null, f: TagFilter, page: Page) => run(db, tagTimelineQuery(viewerId, f, page), page.limit);

export function tagTimelineQuery(viewerId: string | null, f: TagFilter, page: Page): PageQuery {
  const c = cursorSql(sql.raw("st.status_id"), page);
  const conds = [publicConds(viewerId, { ...f, withReplies: true })];
  if (f.onlyMedia) conds.push(sql`EXISTS (SELECT 1 FROM media_attachments ma WHERE ma.status_id = s.id)`);
  const locs = localities(f);
  if (locs.length === 1) conds.push(sql`s.local = ${locs[0]}`);
  for (const name of f.all ?? []) {
    conds.push(sql`EXISTS (SELECT 1 FROM status_tags xa JOIN tags ta ON ta.id = xa.tag_id WHERE xa.status_id = s.id AND ta.name = ${name})`);
  }
  for (const name of f.none ?? []) {
    conds.push(sql`NOT EXISTS (SELECT 1 FROM status_tags xn JOIN tags tn ON tn.id = xn.tag_id WHERE xn.status_id = s.id AND tn.name = ${name})`);
  }
  const where = sql.join(conds, sql` AND `);
  const names = [...new Set([f.tag, ...(f.any ?? [])])];
  // One ordered range of status_tags_tag per tag; CROSS JOIN keeps status_tags as the outer loop.
  const parts = names.map(
    (name) => sql`SELECT id, qt FROM (SELECT st.status_id AS id, ${quotedOf("st.status_id")} FROM status_tags st CROSS JOIN statuses s ON s.id = st.status_id
      WHERE st.tag_id = (SELECT id FROM tags WHERE name = ${name})${c.cond} AND s.visibility = 'public' AND ${where}
      ORDER BY st.status_id ${c.dir} LIMIT ${page.limit})`,
  );
  return { query: sql`${sql.join(parts, sql` UNION `)} ORDER BY id ${c.dir} LIMIT ${page.limit}`, ascending: c.ascending };
}

/**
 * Public statuses that share a trending link (Mastodon 4.3's link timeline, LinkTimelinesController), newest first by
 * the card's (preview_card_id, status_id) index; null when the link is not an allowed trend (404), as Mastodon's.
 */
export async function linkTimeline(db: DB, viewerId: string | null, url: string, page: Page): Promise<PageIds | null> {
  const [card] = await db.all<{ id: string }>(sql`SELECT pc.id AS id FROM preview_cards pc
    JOIN preview_card_trends t ON t.preview_card_id = pc.id AND t.allowed = 1 WHERE pc.url = ${url} LIMIT 1`);
  if (!card) return null;
  const c = cursorSql(sql.raw("sp.status_id"), page);
  return run(
    db,
    {
      query: sql`SELECT sp.status_id AS id, ${quotedOf("sp.status_id")} FROM status_preview_cards sp CROSS JOIN statuses s ON s.id = sp.status_id
        WHERE sp.preview_card_id = ${card.id}${c.cond} AND s.visibility = 'public' AND ${publicConds(viewerId, { withReplies: true })}
        ORDER BY sp.status_id ${c.dir} LIMIT ${page.limit}`,
      ascending: c.ascending,
    },
    page.limit,
  );
}

/** A list's feed; null when the list is not the viewer's (404). */
export async function listTimeline(db: DB, viewerId: string, listId: string, page: Page): Promise<PageIds | null> {
  const c = cursorSql(sql.raw("lf.status_id"), page);
  const L = padId(listId);
  const [own, rows] = await db.batch([
    db
      .select({ id: lists.id })
      .from(lists)
      .where(ownedBy(lists, listId, viewerId))
      .limit(1),
    db.all<PageRow>(sql`SELECT lf.status_id AS id, lf.reblog_of_id AS rb, ${quotedOf("coalesce(lf.reblog_of_id, lf.status_id)")} FROM list_feed lf
      WHERE lf.list_id = ${L} AND EXISTS (SELECT 1 FROM lists ol WHERE ol.id = ${L} AND ol.account_id = ${padId(viewerId)})${c.cond}
        AND NOT ${hiddenEntry(viewerId, "lf.author_id", "lf.reblog_of_id")}
      ORDER BY lf.status_id ${c.dir} LIMIT ${page.limit}`),
  ]);
  if (!own.length) return null;
  return toPage(rows as PageRow[], c.ascending, page.limit);
}

/** Direct statuses the viewer sent or was mentioned in (the deprecated direct timeline). */
export const directTimeline = (db: DB, viewerId: string, page: Page) => run(db, directTimelineQuery(viewerId, page), page.limit);

export function directTimelineQuery(viewerId: string, page: Page): PageQuery {
  const v = padId(viewerId);
  const cs = cursorSql(sql.raw("s.id"), page);
  const cm = cursorSql(sql.raw("m.status_id"), page);
  const query = sql`
    SELECT id FROM (SELECT s.id AS id FROM statuses s WHERE s.account_id = ${v} AND +s.visibility = 'direct'${cs.cond}
      ORDER BY s.id ${cs.dir} LIMIT ${page.limit})
    UNION
    SELECT id FROM (SELECT m.status_id AS id FROM mentions m CROSS JOIN statuses s ON s.id = m.status_id
      WHERE m.account_id = ${v} AND s.visibility = 'direct'${cm.cond} AND NOT ${hiddenAuthorFor(viewerId, sql.raw("s.account_id"))}
      ORDER BY m.status_id ${cm.dir} LIMIT ${page.limit})
    ORDER BY id ${cs.dir} LIMIT ${page.limit}`;
  return { query, ascending: cs.ascending };
}

export interface RowPage {
  statusIds: string[];
  /** Cursors are the bookmark / favourite row ids (Mastodon puts internal ids in these Link headers). */
  first?: string;
  last?: string;
  full: boolean;
}

async function ownRows(db: DB, table: typeof bookmarks | typeof favourites, viewerId: string, page: Page): Promise<RowPage> {
  const conds = [eq(table.accountId, viewerId)];
  if (page.maxId) conds.push(lt(table.id, page.maxId));
  if (page.minId) conds.push(gt(table.id, page.minId));
  else if (page.sinceId) conds.push(gt(table.id, page.sinceId));
  const rows = await db
    .select({ id: table.id, statusId: table.statusId })
    .from(table)
    .where(and(...conds))
    .orderBy(page.minId ? asc(table.id) : desc(table.id))
    .limit(page.limit);
  if (page.minId) rows.reverse();
  return { statusIds: rows.map((r) => r.statusId), first: rows[0]?.id, last: rows[rows.length - 1]?.id, full: rows.length >= page.limit };
}

export const bookmarkPage = (db: DB, viewerId: string, page: Page) => ownRows(db, bookmarks, viewerId, page);
export const favouritePage = (db: DB, viewerId: string, page: Page) => ownRows(db, favourites, viewerId, page);
