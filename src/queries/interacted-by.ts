// Who favourited or reblogged a status (internal row ids as cursors).
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { cursorOrder, cursorWhere } from "../db/keyset";
import { accounts, favourites, statuses } from "../db/schema/index";
import { notFound } from "../lib/errors";
import type { Page } from "../lib/pagination";
import type { AccountRow } from "../db/schema";
import { hiddenAuthorFor, statusReadableBy } from "../services/visibility";

export interface AccountPage {
  accounts: AccountRow[];
  firstCursor?: string;
  lastCursor?: string;
  full: boolean;
}

// Joined selects alias the cursor column: D1 batch results are keyed by column name, so a second `id` would
// overwrite the account's.
export async function favouritedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  const conds = [eq(favourites.statusId, statusId), sql`${accounts.suspendedAt} IS NULL`, cursorWhere(favourites.id, page)];
  if (viewerId) conds.push(sql`NOT ${hiddenAuthorFor(viewerId, sql`${favourites.accountId}`)}`);
  const [root, rows] = await db.batch([
    db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.id, statusId), statusReadableBy(viewerId)))
      .limit(1),
    db
      .select({ cursor: sql`${favourites.id}`.mapWith(favourites.id).as("row_cursor"), account: accounts })
      .from(favourites)
      .innerJoin(accounts, eq(accounts.id, favourites.accountId))
      .where(and(...conds))
      .orderBy(cursorOrder(favourites.id, page))
      .limit(page.limit),
  ]);
  if (!root.length) throw notFound();
  return toPage(rows, page);
}

export async function rebloggedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  const conds = [eq(statuses.reblogOfId, statusId), sql`${accounts.suspendedAt} IS NULL`, statusReadableBy(viewerId), cursorWhere(statuses.id, page)];
  if (viewerId) conds.push(sql`NOT ${hiddenAuthorFor(viewerId, statuses.accountId)}`);
  const [root, rows] = await db.batch([
    db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.id, statusId), statusReadableBy(viewerId)))
      .limit(1),
    db
      .select({ cursor: sql`${statuses.id}`.mapWith(statuses.id).as("row_cursor"), account: accounts })
      .from(statuses)
      .innerJoin(accounts, eq(accounts.id, statuses.accountId))
      .where(and(...conds))
      .orderBy(cursorOrder(statuses.id, page))
      .limit(page.limit),
  ]);
  if (!root.length) throw notFound();
  return toPage(rows, page);
}

function toPage(rows: { cursor: string; account: AccountRow }[], page: Page): AccountPage {
  const list = page.minId ? rows.slice().reverse() : rows;
  return {
    accounts: list.map((r) => r.account),
    firstCursor: list[0]?.cursor,
    lastCursor: list[list.length - 1]?.cursor,
    full: rows.length === page.limit,
  };
}
