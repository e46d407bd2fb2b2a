// Who favourited or reblogged a status (internal row ids as cursors).
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { cursorOrder, cursorWhere } from "../../db/keyset";
import { accounts, favourites, statuses } from "../../db/schema/index";
import { notFound } from "../../lib/http/errors";
import type { Page } from "../../lib/http/pagination";
import type { AccountRow } from "../../db/schema";
import { hiddenAuthorFor, statusReadableBy } from "../../policy/visibility";

export interface AccountPage {
  accounts: AccountRow[];
  firstCursor?: string;
  lastCursor?: string;
  full: boolean;
}

export async function favouritedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  return accountsBehind(db, statusId, viewerId, page, { table: favourites, id: favourites.id, accountId: favourites.accountId }, [
    eq(favourites.statusId, statusId),
  ]);
}

export async function rebloggedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  return accountsBehind(db, statusId, viewerId, page, { table: statuses, id: statuses.id, accountId: statuses.accountId }, [
    eq(statuses.reblogOfId, statusId),
    statusReadableBy(viewerId),
  ]);
}

/**
 * A page of the accounts of the `rows` matching `where` (favourites, reblogs), with the status read in the same batch:
 * 404 when the viewer may not see it. Suspended accounts and those hidden from the viewer are left out. The cursor
 * column is aliased: D1 batch results are keyed by column name, so a second `id` would overwrite the account's.
 */
async function accountsBehind(
  db: DB,
  statusId: string,
  viewerId: string | null,
  page: Page,
  rows: {
    table: typeof favourites | typeof statuses;
    id: typeof favourites.id | typeof statuses.id;
    accountId: typeof favourites.accountId | typeof statuses.accountId;
  },
  where: (SQL | undefined)[],
): Promise<AccountPage> {
  const conds = [...where, sql`${accounts.suspendedAt} IS NULL`, cursorWhere(rows.id, page)];
  if (viewerId) conds.push(sql`NOT ${hiddenAuthorFor(viewerId, sql`${rows.accountId}`)}`);
  const [root, found] = await db.batch([
    db
      .select({ id: statuses.id })
      .from(statuses)
      .where(and(eq(statuses.id, statusId), statusReadableBy(viewerId)))
      .limit(1),
    db
      .select({ cursor: sql`${rows.id}`.mapWith(rows.id).as("row_cursor"), account: accounts })
      .from(rows.table)
      .innerJoin(accounts, eq(accounts.id, rows.accountId))
      .where(and(...conds))
      .orderBy(cursorOrder(rows.id, page))
      .limit(page.limit),
  ]);
  if (!root.length) throw notFound();
  return toPage(found, page);
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
