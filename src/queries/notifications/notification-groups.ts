// Grouped notifications (Mastodon 4.3's /api/v2/notifications): pages of notification *groups*, a group's data and
// its accounts, and the unread group count.
//
// Paging over groups is Mastodon's `paginate_groups` (a recursive CTE that walks notifications newest first and keeps
// the first one of each group it meets, until it has `limit` groups) said another way: a notification stands for its
// group on a page when no notification of the same group lies between it and the page's starting cursor. Newest
// first (max_id/since_id) that is the group's newest notification below max_id; oldest first (min_id) its oldest
// notification above min_id. One query over notifications_account, with the check on notifications_group.
//
// A page is then: that query (with the senders and reports joined), and one batch with every grouped group's data
// (latest id, count, 8 sample senders, the page's oldest member and latest time, Mastodon's load_groups_data), the
// sample accounts and reported accounts; the statuses come from renderStatuses. A constant number of round trips.
import { and, eq, sql, type SQL } from "drizzle-orm";
import { idList, runBatch, type DB } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { accounts, notifications, type AccountRow, type NotificationType } from "../../db/schema";
import { padId, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { boundViewer, hiddenAuthorFor } from "../../policy/visibility";
import { filterConds, pageRange, selectWithRefs, walkConds, type WalkValues, type NotificationFilter, type NotificationWithRefs } from "./notifications";
import { accountRows } from "../../db/table-rows";

/** Types that group (Mastodon's GROUPABLE_NOTIFICATION_TYPES). */
export const GROUPABLE_TYPES: readonly NotificationType[] = ["favourite", "reblog", "follow"];

/** Accounts shown per group (Mastodon's NotificationGroup::SAMPLE_ACCOUNTS_SIZE). */
export const SAMPLE_ACCOUNTS = 8;

export interface GroupedFilter extends NotificationFilter {
  /** The types that group on this request (`grouped_types[]` ∩ groupable; default: all groupable). */
  groupedTypes: readonly NotificationType[];
}

/** `grouped_types[]` as Mastodon reads it: absent or empty → the groupable types; else those of them asked for. */
export function groupedTypesParam(raw: string[] | undefined): NotificationType[] {
  if (!raw?.length) return [...GROUPABLE_TYPES];
  return GROUPABLE_TYPES.filter((t) => raw.includes(t));
}

/** The key a notification shows under: its group_key when its type groups on this request, else `ungrouped-<id>`. */
export function effectiveKey(n: { id: string; type: NotificationType; groupKey: string | null }, grouped: readonly NotificationType[]): string {
  return n.groupKey && grouped.includes(n.type) ? n.groupKey : `ungrouped-${n.id}`;
}

export interface GroupData {
  mostRecentId: string;
  count: number;
  sampleIds: string[];
  /** Present when paginating: the oldest member at or above the page's lower bound, and the newest member's time. */
  pageMinId?: string;
  latestAt?: number;
}

export interface GroupedPage {
  rows: (NotificationWithRefs & { key: string })[];
  groups: Map<string, GroupData>;
  /** Sample senders and reported accounts, by id. */
  accounts: Map<string, AccountRow>;
  /** Whether the page fields (page_min_id, page_max_id, latest_page_notification_at) are given. */
  paginated: boolean;
}

/** A member of `key` (raw SQL alias `x`) the viewer (an id, or SQL for it) may see: sender neither suspended nor hidden. */
function memberSql(viewer: string | SQL, key: SQL, now?: SQL): SQL {
  const v = boundViewer(viewer);
  return sql`x.account_id = ${v} AND x.group_key = ${key}
    AND NOT EXISTS (SELECT 1 FROM accounts xa WHERE xa.id = x.from_account_id AND xa.suspended_at IS NOT NULL)
    AND NOT ${hiddenAuthorFor(v, sql`x.from_account_id`, now)}`;
}

interface Range {
  /** Inclusive lower bound (ids), or none. */
  begin?: string;
  /** Inclusive upper bound, or exclusive when `endExclusive`, or none. */
  end?: string;
  endExclusive?: boolean;
}

function upTo(r: Range | null): SQL {
  if (!r?.end) return sql``;
  return r.endExclusive ? sql` AND x.id < ${padId(r.end)}` : sql` AND x.id <= ${padId(r.end)}`;
}

interface GroupDataRow {
  k: string;
  recent: string | null;
  cnt: number;
  samples: string;
  page_min: string | null;
  latest_at: number | null;
}

/** The members of each group in `keys` (json_each alias `g`) as statements of one batch. */
function groupDataStatements(db: DB, viewerId: string, keys: string[], range: Range | null) {
  const member = memberSql(viewerId, sql`g.value`);
  const below = upTo(range);
  const keysJson = JSON.stringify(keys);
  const samples = sql`(SELECT json_group_array(sx.from_account_id) FROM (SELECT x.from_account_id FROM notifications x
      WHERE ${member}${below} ORDER BY x.id DESC LIMIT ${sql.raw(String(SAMPLE_ACCOUNTS))}) sx)`;
  const pageMin = range
    ? sql`(SELECT x.id FROM notifications x WHERE ${member}${range.begin ? sql` AND x.id >= ${padId(range.begin)}` : sql``} ORDER BY x.id ASC LIMIT 1)`
    : sql`NULL`;
  const data = db.all<GroupDataRow>(sql`SELECT g.value AS k,
      (SELECT x.id FROM notifications x WHERE ${member}${below} ORDER BY x.id DESC LIMIT 1) AS recent,
      (SELECT count(*) FROM notifications x WHERE ${member}${below}) AS cnt,
      ${samples} AS samples,
      ${pageMin} AS page_min,
      (SELECT x.created_at FROM notifications x WHERE ${member}${below} ORDER BY x.id DESC LIMIT 1) AS latest_at
    FROM json_each(${keysJson}) g`);
  const sampleAccounts = accountRows(db, { where: sql`${accounts.id} IN (SELECT s.value FROM json_each(${keysJson}) g, json_each(${samples}) s)` });
  return { data, sampleAccounts };
}

function toGroupData(r: GroupDataRow, paginated: boolean): GroupData | null {
  if (!r.recent) return null;
  const d: GroupData = {
    mostRecentId: unpadId(String(r.recent)),
    count: Number(r.cnt),
    sampleIds: (JSON.parse(r.samples || "[]") as string[]).map((x) => unpadId(String(x))),
  };
  if (paginated) {
    d.pageMinId = r.page_min ? unpadId(String(r.page_min)) : d.mostRecentId;
    d.latestAt = Number(r.latest_at);
  }
  return d;
}

/**
 * Loads, in one batch, the data of the grouped rows' groups and every account the page shows (sample senders,
 * reported accounts), then attaches the reported accounts to the rows.
 */
async function completePage(
  db: DB,
  viewerId: string,
  rows: (Omit<NotificationWithRefs, "reportTarget"> & { key: string })[],
  range: Range | null,
  paginated: boolean,
): Promise<GroupedPage> {
  const keys = [...new Set(rows.filter((r) => !r.key.startsWith("ungrouped-")).map((r) => r.key))];
  const targetIds = [...new Set(rows.flatMap((r) => (r.report ? [r.report.targetAccountId] : [])))];
  const stmts = [];
  const g = keys.length ? groupDataStatements(db, viewerId, keys, range) : null;
  if (g) stmts.push(g.data, g.sampleAccounts);
  if (targetIds.length) stmts.push(accountRows(db, { where: sql`${accounts.id} IN ${idList(targetIds)}` }));
  const res = await runBatch(db, stmts);
  const groups = new Map<string, GroupData>();
  const accountsById = new Map<string, AccountRow>();
  for (const r of rows) accountsById.set(r.from.id, r.from);
  let i = 0;
  if (g) {
    for (const d of res[i++] as GroupDataRow[]) {
      const gd = toGroupData(d, paginated);
      if (gd) groups.set(String(d.k), gd);
    }
    for (const a of res[i++] as AccountRow[]) accountsById.set(a.id, a);
  }
  if (targetIds.length) for (const a of res[i++] as AccountRow[]) accountsById.set(a.id, a);
  return {
    rows: rows.map((r) => ({ ...r, reportTarget: r.report ? (accountsById.get(r.report.targetAccountId) ?? null) : null })),
    groups,
    accounts: accountsById,
    paginated,
  };
}

/**
 * The condition that makes a notification its group's representative on a page (see the header): no visible member
 * of its group between it and the page's start (`v.start`: max_id newest first, min_id oldest first). The grouped
 * types are written as literals: GROUPABLE_TYPES' (groupedTypesParam), never a client's text.
 */
function representativeSql(f: GroupedFilter, ascending: boolean, v: WalkValues): SQL | undefined {
  if (!f.groupedTypes.length) return undefined;
  const between = ascending
    ? sql`x.id < ${notifications.id}${v.start ? sql` AND x.id > ${v.start}` : sql``}`
    : sql`x.id > ${notifications.id}${v.start ? sql` AND x.id < ${v.start}` : sql``}`;
  const from = f.accountId ? sql` AND x.from_account_id = ${notifications.fromAccountId}` : sql``;
  const grouped = sql.raw(f.groupedTypes.map((t) => `'${t}'`).join(", "));
  return sql`NOT (${notifications.type} IN (${grouped})
    AND ${notifications.groupKey} IS NOT NULL
    AND EXISTS (SELECT 1 FROM notifications x WHERE ${memberSql(v.viewer, sql`${notifications.groupKey}`, v.now)} AND ${between}${from}))`;
}

/**
 * A page of groups: its representative notifications newest first, and their groups' data over the page's range
 * (Mastodon's pagination_range: the page's first and last ids, widened to the cursor on a last, incomplete page).
 */
export async function groupedPage(db: DB, viewerId: string, f: GroupedFilter, page: Page): Promise<GroupedPage> {
  const found = await selectWithRefs(db, {
    where: and(...walkConds(viewerId, f, pageRange(page), (v) => representativeSql(f, !!page.minId, v))),
    orderBy: cursorOrder(notifications.id, page),
    limit: page.limit,
  });
  const rows = inPageOrder(found, page).map((r) => ({ ...r, key: effectiveKey(r.n, f.groupedTypes) }));
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last) return { rows: [], groups: new Map(), accounts: new Map(), paginated: true };
  const range: Range = { begin: last.n.id, end: first.n.id };
  if (rows.length < page.limit) {
    if (page.minId) {
      range.end = page.maxId;
      range.endExclusive = true;
    } else {
      range.begin = page.sinceId ? (BigInt(page.sinceId) + 1n).toString() : undefined;
    }
  }
  return completePage(db, viewerId, rows, range, true);
}

/** Notifications of one group key (`ungrouped-<id>` is that notification), as SQL on `notifications`. */
function byGroupKey(key: string): SQL | null {
  if (key.startsWith("ungrouped-")) {
    const id = key.slice("ungrouped-".length);
    return /^\d{1,19}$/.test(id) ? eq(notifications.id, id) : null;
  }
  return key.length > 0 && key.length <= 100 ? eq(notifications.groupKey, key) : null;
}

/** GET /api/v2/notifications/:group_key: the group (its newest visible member), without page fields; null if none. */
export async function findGroup(db: DB, viewerId: string, key: string): Promise<GroupedPage | null> {
  const cond = byGroupKey(key);
  if (!cond) return null;
  const [row] = await selectWithRefs(db, {
    where: and(cond, ...filterConds(viewerId, { includeFiltered: true })),
    orderBy: sql`${notifications.id} DESC`,
    limit: 1,
  });
  if (!row) return null;
  const k = effectiveKey(row.n, GROUPABLE_TYPES);
  return completePage(db, viewerId, [{ ...row, key: k }], null, false);
}

/** GET /api/v2/notifications/:group_key/accounts: the group's senders, newest notification first, paged by its ids. */
export async function groupAccounts(db: DB, viewerId: string, key: string, page: Page): Promise<{ cursor: string; account: AccountRow }[]> {
  const cond = byGroupKey(key);
  if (!cond) return [];
  const rows = await selectWithRefs(db, {
    where: and(cond, ...filterConds(viewerId, { includeFiltered: true }), cursorWhere(notifications.id, page)),
    orderBy: cursorOrder(notifications.id, page),
    limit: page.limit,
  });
  return inPageOrder(rows, page).map((r) => ({ cursor: r.n.id, account: r.from }));
}

/**
 * GET /api/v2/notifications/unread_count: the groups with a notification newer than the notifications marker,
 * counted up to `limit` (Mastodon counts paginate_groups_by_min_id from the marker). One query.
 */
export async function groupedUnreadCount(db: DB, viewerId: string, f: GroupedFilter, limit: number): Promise<number> {
  const marker = sql`coalesce((SELECT m.last_read_id FROM markers m WHERE m.account_id = ${padId(viewerId)} AND m.timeline = 'notifications'), ${padId("0")})`;
  const inner = db
    .select({ one: sql`1` })
    .from(notifications)
    .where(and(...walkConds(viewerId, f, { above: marker, below: null, start: marker, order: null, limit }, (v) => representativeSql(f, true, v))))
    .limit(limit);
  const [row] = await db.select({ n: sql<number>`count(*)` }).from(inner.as("unread"));
  return Number(row?.n ?? 0);
}
