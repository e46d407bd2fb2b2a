// Lists of followed accounts (Mastodon's List/ListAccount). A list is visible only to its owner: any other id is a
// 404 (security B14). At most 50 lists per user (spec limits), enforced inside the INSERT so two requests cannot
// both pass a separate count.
import { and, asc, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { DB } from "../../db/client";
import { ownRow, ownedBy } from "../../db/owned";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { idList } from "../../db/client";
import { accounts, followRequests, follows, listAccounts, listFeed, lists } from "../../db/schema";
import type { ListRow } from "../../entities/accounts/list";
import type { Effects } from "../../effects/collector";
import { notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import type { AccountRow } from "../../db/schema";

export const MAX_LISTS = 50;
export const MAX_TITLE = 100;
export const REPLIES_POLICIES = ["followed", "list", "none"] as const;
export type RepliesPolicy = (typeof REPLIES_POLICIES)[number];

function checkTitle(title: string): string {
  const t = title.trim();
  if (!t) throw validationFailed("Title can't be blank");
  if (Array.from(t).length > MAX_TITLE) throw validationFailed(`Title is too long (maximum is ${MAX_TITLE} characters)`);
  return t;
}

export async function listsOf(db: DB, ownerId: string): Promise<ListRow[]> {
  return db.select().from(lists).where(eq(lists.accountId, ownerId)).orderBy(asc(lists.title), asc(lists.id));
}

/** The owner's lists that contain `accountId` (GET /api/v1/accounts/:id/lists). */
export async function listsContaining(db: DB, ownerId: string, accountId: string): Promise<ListRow[]> {
  return db
    .select({ l: lists })
    .from(lists)
    .innerJoin(listAccounts, eq(listAccounts.listId, lists.id))
    .where(and(eq(lists.accountId, ownerId), eq(listAccounts.accountId, accountId)))
    .orderBy(asc(lists.title))
    .then((rows) => rows.map((r) => r.l));
}

export async function ownList(db: DB, ownerId: string, listId: string): Promise<ListRow> {
  return ownRow(db, lists, listId, ownerId);
}

export interface ListInput {
  title?: string;
  repliesPolicy?: RepliesPolicy;
  exclusive?: boolean;
}

export async function createList(db: DB, ownerId: string, input: ListInput): Promise<ListRow> {
  const title = checkTitle(input.title ?? "");
  const now = Date.now();
  const id = snowflake(now);
  const row: ListRow = { id, accountId: ownerId, title, repliesPolicy: input.repliesPolicy ?? "list", exclusive: input.exclusive ?? false, createdAt: now };
  const owner = padId(ownerId);
  const res = await db.run(sql`INSERT INTO lists (id, account_id, title, replies_policy, exclusive, created_at)
    SELECT ${padId(id)}, ${owner}, ${title}, ${row.repliesPolicy}, ${row.exclusive ? 1 : 0}, ${now}
    WHERE (SELECT count(*) FROM lists WHERE account_id = ${owner}) < ${MAX_LISTS}`);
  if (!res.meta.changes) throw validationFailed(`You have reached the maximum of ${MAX_LISTS} lists`);
  return row;
}

export async function updateList(db: DB, ownerId: string, listId: string, input: ListInput): Promise<ListRow> {
  const set: Partial<ListRow> = {};
  if (input.title !== undefined) set.title = checkTitle(input.title);
  if (input.repliesPolicy !== undefined) set.repliesPolicy = input.repliesPolicy;
  if (input.exclusive !== undefined) set.exclusive = input.exclusive;
  const where = ownedBy(lists, listId, ownerId);
  const [, rows] = Object.keys(set).length
    ? await db.batch([db.update(lists).set(set).where(where), db.select().from(lists).where(where).limit(1)])
    : [null, await db.select().from(lists).where(where).limit(1)];
  if (!rows[0]) throw notFound();
  return rows[0];
}

export async function deleteList(db: DB, ownerId: string, listId: string): Promise<void> {
  const owned = sql`EXISTS (SELECT 1 FROM lists WHERE id = ${padId(listId)} AND account_id = ${padId(ownerId)})`;
  const [, , del] = await db.batch([
    db.delete(listAccounts).where(and(eq(listAccounts.listId, listId), owned)),
    db.delete(listFeed).where(and(eq(listFeed.listId, listId), owned)),
    db.delete(lists).where(ownedBy(lists, listId, ownerId)),
  ]);
  if (!del.meta.changes) throw notFound();
}

// Aliased: a D1 batch returns rows as objects, where list_accounts.id and accounts.id would collide.
const cursorCol = lazy(() => sql<string>`${listAccounts.id}`.mapWith(listAccounts.id).as("cursor"));

export interface ListMember {
  cursor: string; // list_accounts.id: the Link header cursor
  account: AccountRow;
}

/** Members of an owned list, newest first, paged by list_accounts ids; `page.limit` 0 means all. */
export async function listMembers(db: DB, ownerId: string, listId: string, page: Page | null): Promise<ListMember[]> {
  const q = db
    .select({ cursor: cursorCol(), account: accounts })
    .from(listAccounts)
    .innerJoin(accounts, eq(accounts.id, listAccounts.accountId))
    .where(and(eq(listAccounts.listId, listId), isNull(accounts.suspendedAt), page ? cursorWhere(listAccounts.id, page) : undefined))
    .orderBy(page ? cursorOrder(listAccounts.id, page) : desc(listAccounts.id));
  const [own, rows] = await db.batch([
    db
      .select({ id: lists.id })
      .from(lists)
      .where(ownedBy(lists, listId, ownerId))
      .limit(1),
    page ? q.limit(page.limit) : q.limit(10_000),
  ]);
  if (!own.length) throw notFound();
  return page ? inPageOrder(rows, page) : rows;
}

/**
 * Adds accounts to an owned list. Like Mastodon, only accounts the owner follows (or has asked to follow) can be
 * added; anything else fails the whole request with 422.
 */
export async function addListAccounts(db: DB, fx: Effects, ownerId: string, listId: string, accountIds: string[]): Promise<void> {
  const ids = [...new Set(accountIds)];
  const [own, followed, requested, existing] = await db.batch([
    db
      .select({ id: lists.id })
      .from(lists)
      .where(ownedBy(lists, listId, ownerId))
      .limit(1),
    db
      .select({ id: follows.targetAccountId })
      .from(follows)
      .where(and(eq(follows.accountId, ownerId), inArray(follows.targetAccountId, idList(ids)))),
    db
      .select({ id: followRequests.targetAccountId })
      .from(followRequests)
      .where(and(eq(followRequests.accountId, ownerId), inArray(followRequests.targetAccountId, idList(ids)))),
    db
      .select({ id: accounts.id })
      .from(accounts)
      .where(inArray(accounts.id, idList(ids))),
  ]);
  if (!own.length) throw notFound();
  if (!ids.length) return;
  const known = new Set(existing.map((r) => r.id));
  if (ids.some((i) => !known.has(i))) throw notFound();
  const allowed = new Set([...followed, ...requested].map((r) => r.id));
  if (ids.some((i) => !allowed.has(i))) throw validationFailed("Account has not been followed");
  const stmts = ids.map((accountId) =>
    db.insert(listAccounts).values({ id: snowflake(), listId, accountId }).onConflictDoNothing().returning({ accountId: listAccounts.accountId }),
  );
  const added = (await db.batch(stmts as [(typeof stmts)[number], ...(typeof stmts)[number][]])) as { accountId: string }[][];
  // Each newly added member's recent statuses fill the list's feed (src/timelines/feed-merge.ts). Recorded after the
  // batch: only the members it added; it travels by the send only (src/effects/commit.ts).
  for (const rows of added) for (const r of rows) fx.add({ type: "merge_list", listId, accountId: r.accountId });
}

/** Removes accounts from an owned list, with their entries in the list's feed. */
export async function removeListAccounts(db: DB, ownerId: string, listId: string, accountIds: string[]): Promise<void> {
  const ids = [...new Set(accountIds)];
  const owned = sql`EXISTS (SELECT 1 FROM lists WHERE id = ${padId(listId)} AND account_id = ${padId(ownerId)})`;
  const [own] = await db.batch([
    db
      .select({ id: lists.id })
      .from(lists)
      .where(ownedBy(lists, listId, ownerId))
      .limit(1),
    db.delete(listAccounts).where(and(eq(listAccounts.listId, listId), inArray(listAccounts.accountId, idList(ids)), owned)),
    db.delete(listFeed).where(and(eq(listFeed.listId, listId), inArray(listFeed.authorId, idList(ids)), owned)),
  ]);
  if (!own.length) throw notFound();
}
