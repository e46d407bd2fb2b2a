// Reading notification requests (senders whose mentions the viewer's policy held back): a page newest first, or one.
// Requests of suspended senders are left out, as Mastodon's without_suspended does.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { accounts, notificationRequests, type AccountRow } from "../../db/schema";
import type { Page } from "../../lib/http/pagination";

export type NotificationRequestRow = typeof notificationRequests.$inferSelect;
export interface RequestWithAccount {
  request: NotificationRequestRow;
  from: AccountRow;
}

function select(db: DB) {
  return db
    .select({ request: notificationRequests, from: accounts })
    .from(notificationRequests)
    .innerJoin(accounts, eq(accounts.id, notificationRequests.fromAccountId));
}

const visible = (viewerId: string) => and(eq(notificationRequests.accountId, viewerId), sql`${accounts.suspendedAt} IS NULL`);

export async function requestPage(db: DB, viewerId: string, page: Page): Promise<RequestWithAccount[]> {
  const rows = await select(db)
    .where(and(visible(viewerId), cursorWhere(notificationRequests.id, page)))
    .orderBy(cursorOrder(notificationRequests.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

/** One of the viewer's requests, or null (another user's is a 404). */
export async function findRequest(db: DB, viewerId: string, id: string): Promise<RequestWithAccount | null> {
  const [row] = await select(db)
    .where(and(visible(viewerId), eq(notificationRequests.id, id)))
    .limit(1);
  return row ?? null;
}
