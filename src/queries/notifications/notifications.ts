// Reading, dismissing and counting one's notifications. A page is one query (plus one for reported accounts when
// there are admin.report rows): notifications joined with their sender and report, newest first on
// notifications_account (account_id, id), or notifications_type (account_id, type, id) for a page filtered by type
// (walkConds), hidden senders left out.
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { deleteOwnRow } from "../../db/owned";
import { frozenHead, frozenSelect } from "../../db/frozen";
import { boundList, idsJson } from "../../db/id-list";
import { cursorBounds, cursorOrder, inPageOrder } from "../../db/keyset";
import { idList } from "../../db/client";
import { accounts, notifications, reports, NOTIFICATION_TYPES, type NotificationType } from "../../db/schema/index";
import { padId, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import type { AccountRow } from "../../db/schema";
import { hiddenAuthorFor } from "../../policy/visibility";
import { accountRows } from "../../db/table-rows";
import { quotedStatusIdOf } from "../statuses/quoted";

export type NotificationRow = typeof notifications.$inferSelect;
export type ReportRow = typeof reports.$inferSelect;

export interface NotificationWithRefs {
  n: NotificationRow;
  from: AccountRow;
  report: ReportRow | null;
  reportTarget: AccountRow | null;
  /** Read with the page (selectWithRefs): the status it boosts, and the one it (or that) quotes (renderStatuses' `related`). */
  rb?: string | null;
  qt?: string | null;
}

/**
 * The statuses the rows' statuses show besides themselves (boost targets, quoted statuses), when the page's query read
 * them for every row; else undefined (renderStatuses then finds them from the ids).
 */
export function relatedOfRows(rows: readonly Pick<NotificationWithRefs, "n" | "rb" | "qt">[]): string[] | undefined {
  const out = new Set<string>();
  for (const r of rows) {
    if (!r.n.statusId) continue;
    if (r.qt === undefined || r.rb === undefined) return undefined;
    if (r.rb) out.add(unpadId(String(r.rb)));
    if (r.qt) out.add(unpadId(String(r.qt)));
  }
  return [...out];
}

export interface NotificationFilter {
  types?: string[];
  excludeTypes?: string[];
  accountId?: string | null;
  /** Show notifications the policy held back too (always, when `accountId` is given: Mastodon's browserable). */
  includeFiltered?: boolean;
}

/** A notification's sender is shown to its recipient `v` (an id, or SQL for it): not hidden, not suspended. */
function senderShown(v: string | SQL, now?: SQL): SQL[] {
  return [
    sql`NOT ${hiddenAuthorFor(v, sql`${notifications.fromAccountId}`, now)}`,
    sql`NOT EXISTS (SELECT 1 FROM accounts fa WHERE fa.id = ${notifications.fromAccountId} AND fa.suspended_at IS NOT NULL)`,
  ];
}

/**
 * The types a filter keeps, as Mastodon's Notification.browserable reads `types[]` and `exclude_types[]`: the types
 * asked for that exist (every type when none is asked for), less those excluded. Null when that is every type.
 */
export function keptTypes(f: NotificationFilter): NotificationType[] | null {
  if (!f.types?.length && !f.excludeTypes?.length) return null;
  const asked = f.types?.length ? NOTIFICATION_TYPES.filter((t) => f.types!.includes(t)) : NOTIFICATION_TYPES;
  const kept = asked.filter((t) => !f.excludeTypes?.includes(t));
  return kept.length === NOTIFICATION_TYPES.length ? null : kept;
}

/** Every condition of the filter but its types, over the values given (bound parameters, or the merge's `w`). */
function recipientConds(f: NotificationFilter, v: Pick<WalkValues, "viewer" | "sender"> & { now?: SQL }): SQL[] {
  const conds: SQL[] = [eq(notifications.accountId, v.viewer), ...senderShown(v.viewer, v.now)];
  if (!f.includeFiltered && !f.accountId) conds.push(sql`${notifications.filtered} = 0`);
  if (v.sender) conds.push(eq(notifications.fromAccountId, v.sender));
  return conds;
}

export function filterConds(viewerId: string, f: NotificationFilter): SQL[] {
  const conds = recipientConds(f, { viewer: sql`${padId(viewerId)}`, sender: f.accountId ? sql`${padId(f.accountId)}` : null });
  const kept = keptTypes(f);
  if (kept) conds.push(kept.length ? inArray(notifications.type, kept) : sql`0`);
  return conds;
}

/** The values a walk of notifications compares with, as SQL: bound parameters, or columns of the merge's `w`. */
export interface WalkValues {
  viewer: SQL;
  now: SQL;
  /** The filter's sender (account_id), or null. */
  sender: SQL | null;
  /** Ids above this (exclusive), below that (exclusive), and where a grouped page starts; null: none. */
  above: SQL | null;
  below: SQL | null;
  start: SQL | null;
}

/** What a walk covers: its bounds, its order (null: a count, which needs none) and its limit. */
export interface WalkRange extends Pick<WalkValues, "above" | "below" | "start"> {
  order: "ASC" | "DESC" | null;
  limit: number;
}

/** A page as a walk: the cursor's bounds (keyset.ts), min_id's order upwards, and the start of its groups. */
export function pageRange(page: Page): WalkRange {
  const { above, below } = cursorBounds(page);
  const start = page.minId ?? page.maxId;
  return {
    above: above ? sql`${above}` : null,
    below: below ? sql`${below}` : null,
    start: start ? sql`${padId(start)}` : null,
    order: page.minId ? "ASC" : "DESC",
    limit: page.limit,
  };
}

/**
 * The conditions of a page, or of a count, of the viewer's notifications: the filter's, the range's bounds, and
 * `more`'s (a group's representative), `more` given the values to compare with. With one type kept, or every one,
 * notifications_type (account_id, type, id) or notifications_account is the page's range as it is. With several, a
 * walk of notifications_account would read every notification of the types left out, to the end when fewer matches
 * than the page are left; so each kept type is its own walk of notifications_type, merged in the page's order with
 * the page's limit (UNION ALL … ORDER BY 1 LIMIT n, which SQLite runs as a merge that pulls from each walk only what
 * the page takes: about n rows, plus one per type), and the outer query finds the page's rows by id. The walks share
 * their values through a one-row `w` (each walk naming a bound value again would pass D1's 100 bound parameters a
 * statement with a dozen types). A count needs no order, so `type IN (…)` is read as one range of notifications_type
 * per type as it stands.
 */
export function walkConds(viewerId: string, f: NotificationFilter, range: WalkRange, more?: (v: WalkValues) => SQL | undefined): SQL[] {
  const kept = keptTypes(f);
  const { above, below, start, order, limit } = range;
  if (!kept || kept.length <= 1 || !order) {
    const v: WalkValues = { viewer: sql`${padId(viewerId)}`, now: sql`${Date.now()}`, sender: null, above, below, start };
    return [...filterConds(viewerId, f), ...idBounds(v), ...[more?.(v)].filter((c): c is SQL => !!c)];
  }
  const col = (name: string) => sql.raw(`(SELECT ${name} FROM w)`);
  const v: WalkValues = {
    viewer: col("viewer"),
    now: col("now"),
    sender: f.accountId ? col("sender") : null,
    above: above && col("above"),
    below: below && col("below"),
    start: start && col("start"),
  };
  const conds = [...recipientConds(f, v), ...idBounds(v)];
  const extra = more?.(v);
  if (extra) conds.push(extra);
  // The type as a literal: one of NOTIFICATION_TYPES (keptTypes), never a client's text.
  const walks = kept.map(
    (t) => sql`SELECT ${notifications.id} FROM ${notifications} WHERE ${and(...conds, sql`${notifications.type} = ${sql.raw(`'${t}'`)}`)}`,
  );
  const w = sql`WITH w(viewer, now, above, below, start, sender) AS (SELECT ${padId(viewerId)}, ${Date.now()}, ${above}, ${below}, ${start}, ${f.accountId ? padId(f.accountId) : null})`;
  return [sql`${notifications.id} IN (${w} ${merged(walks, order, limit)})`];
}

/**
 * The walks as one UNION ALL in `order`, limited to `limit`. D1 allows 5 terms in a compound SELECT: more are merged
 * five at a time first, each group limited the same way (SQLite sorts each group's at most `limit` rows before the
 * outer merge, so a page reads at most `limit` rows, plus one per walk, per group).
 */
function merged(walks: SQL[], order: "ASC" | "DESC", limit: number): SQL {
  const tail = sql` ORDER BY 1 ${sql.raw(order)} LIMIT ${limit}`;
  if (walks.length <= MAX_COMPOUND_TERMS) return sql`${sql.join(walks, sql` UNION ALL `)}${tail}`;
  const groups: SQL[] = [];
  for (let i = 0; i < walks.length; i += MAX_COMPOUND_TERMS) {
    groups.push(sql`SELECT id FROM (${merged(walks.slice(i, i + MAX_COMPOUND_TERMS), order, limit)})`);
  }
  return merged(groups, order, limit);
}

/** D1's limit on the terms of one compound SELECT ("too many terms in compound SELECT" past it). */
const MAX_COMPOUND_TERMS = 5;

function idBounds(v: WalkValues): SQL[] {
  const out: SQL[] = [];
  if (v.above) out.push(sql`${notifications.id} > ${v.above}`);
  if (v.below) out.push(sql`${notifications.id} < ${v.below}`);
  return out;
}

/**
 * Notifications joined with their sender and report, and the ids of the statuses each one's status shows besides
 * itself (boost target, quoted status); `tail` selects, orders and limits. The SELECT … JOIN text is built once.
 */
export const selectWithRefs = frozenHead((db) => {
  const rb = sql`(SELECT rs.reblog_of_id FROM statuses rs WHERE rs.id = ${notifications.statusId})`;
  return db
    .select({
      n: notifications,
      from: accounts,
      report: reports,
      rb: sql<string | null>`${rb}`.as("n_rb"),
      qt: sql<string | null>`${quotedStatusIdOf(sql`coalesce(${rb}, ${notifications.statusId})`)}`.as("n_qt"),
    })
    .from(notifications)
    .innerJoin(accounts, eq(accounts.id, notifications.fromAccountId))
    .leftJoin(reports, eq(reports.id, notifications.reportId));
});

/**
 * Reported accounts come in a second query: joining accounts twice would pass D1's limit of 100 result columns as
 * the accounts table grows.
 */
export async function withReportTargets(db: DB, rows: Omit<NotificationWithRefs, "reportTarget">[]): Promise<NotificationWithRefs[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.report ? [r.report.targetAccountId] : [])))];
  const targets = ids.length ? await accountRows(db, { where: inArray(accounts.id, idList(ids)) }) : [];
  const byId = new Map(targets.map((a) => [a.id, a]));
  return rows.map((r) => ({ ...r, reportTarget: r.report ? (byId.get(r.report.targetAccountId) ?? null) : null }));
}

export async function notificationPage(db: DB, viewerId: string, f: NotificationFilter, page: Page): Promise<NotificationWithRefs[]> {
  const rows = await selectWithRefs(db, {
    where: and(...walkConds(viewerId, f, pageRange(page))),
    orderBy: cursorOrder(notifications.id, page),
    limit: page.limit,
  });
  return withReportTargets(db, inPageOrder(rows, page));
}

/**
 * One of the viewer's notifications, or null (another user's is a 404, B14). A filtered one only with
 * `includeFiltered` (GET /api/v1/notifications/:id shows it, as Mastodon does; streaming never sends it).
 */
export async function findNotification(db: DB, viewerId: string, id: string, includeFiltered = false): Promise<NotificationWithRefs | null> {
  return (await findNotifications(db, viewerId, [id], includeFiltered))[0] ?? null;
}

/**
 * Notifications by id as each one's recipient sees it (what findNotifications gives the recipient; filtered ones left
 * out), for the streaming of new notifications to batch with its other reads (notifyAll): three single-table
 * statements, the notifications, their senders and their reports (a joined select cannot go in a D1 batch: its rows
 * come back as objects, and the tables' same-named columns overwrite each other). `recipientRows` puts them together.
 */
export function notificationsForRecipientsStatements(db: DB, ids: readonly string[]) {
  const values = { ids: idsJson(ids) };
  return [recipientNotifications(db, values), recipientSenders(db, values), recipientReports(db, values)] as const;
}

// Their text built once per isolate (db/frozen.ts): `ids` is the notifications' ids as one JSON value (idsJson).
const recipientNotifications = frozenSelect((db) =>
  db
    .select()
    .from(notifications)
    .where(and(inArray(notifications.id, boundList("ids")), ...senderShown(sql`${notifications.accountId}`), eq(notifications.filtered, false))),
);
const recipientSenders = frozenSelect((db) =>
  db
    .select()
    .from(accounts)
    .where(sql`${accounts.id} IN (SELECT from_account_id FROM notifications WHERE id IN ${boundList("ids")})`),
);
const recipientReports = frozenSelect((db) =>
  db
    .select()
    .from(reports)
    .where(sql`${reports.id} IN (SELECT report_id FROM notifications WHERE id IN ${boundList("ids")})`),
);

/** Who receives these notifications: a statement, batched by the caller with its other reads of them (notifyAll). */
export function notificationRecipientsStatement(db: DB, ids: readonly string[]) {
  return db.all<{ id: string; account_id: string }>(sql`SELECT id, account_id FROM notifications WHERE id IN ${idList(ids)}`);
}

/** The rows of notificationsForRecipientsStatements as findNotifications' (without the statuses' related ids). */
export function recipientRows(ns: NotificationRow[], senders: AccountRow[], found: ReportRow[]): Omit<NotificationWithRefs, "reportTarget">[] {
  const from = new Map(senders.map((a) => [a.id, a]));
  const report = new Map(found.map((r) => [r.id, r]));
  return ns.flatMap((n) => {
    const sender = from.get(n.fromAccountId);
    return sender ? [{ n, from: sender, report: n.reportId ? (report.get(n.reportId) ?? null) : null }] : [];
  });
}

/** Several of the viewer's notifications by id, in the order given, leaving out those not found: one query (two with reports). */
export async function findNotifications(db: DB, viewerId: string, ids: readonly string[], includeFiltered = false): Promise<NotificationWithRefs[]> {
  if (!ids.length) return [];
  const rows = await selectWithRefs(db, { where: and(inArray(notifications.id, idList(ids)), ...filterConds(viewerId, { includeFiltered })) });
  const byId = new Map(rows.map((r) => [r.n.id, r]));
  return withReportTargets(
    db,
    ids.flatMap((id) => byId.get(id) ?? []),
  );
}

/** Deletes one of the viewer's notifications; false when there is none with that id. */
export async function dismissNotification(db: DB, viewerId: string, id: string): Promise<boolean> {
  return deleteOwnRow(db, notifications, id, viewerId);
}

/** Deletes those of the ids that are the viewer's notifications (Mastodon's destroy_multiple); others are ignored. */
export async function dismissNotifications(db: DB, viewerId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.delete(notifications).where(and(eq(notifications.accountId, viewerId), inArray(notifications.id, idList(ids))));
}

export async function clearNotifications(db: DB, viewerId: string): Promise<void> {
  await db.delete(notifications).where(eq(notifications.accountId, viewerId));
}

/** Notifications newer than the notifications marker, counted up to `limit`. */
export async function unreadCount(db: DB, viewerId: string, f: NotificationFilter, limit: number): Promise<number> {
  const marker = sql`coalesce((SELECT m.last_read_id FROM markers m WHERE m.account_id = ${padId(viewerId)} AND m.timeline = 'notifications'), ${padId("0")})`;
  const inner = db
    .select({ one: sql`1` })
    .from(notifications)
    .where(and(...walkConds(viewerId, f, { above: marker, below: null, start: null, order: null, limit })))
    .limit(limit);
  const [row] = await db.select({ n: sql<number>`count(*)` }).from(inner.as("unread"));
  return Number(row?.n ?? 0);
}
