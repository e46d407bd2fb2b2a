// GET /api/v1/statuses/:id/quotes: the accepted quotes of a status, newest quote first, paged by quote id
// (Api::V1::Statuses::QuotesController). Someone other than the author does not see quotes by accounts they hide.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { quotes, statuses } from "../../db/schema";
import { notFound } from "../../lib/http/errors";
import type { Page } from "../../lib/http/pagination";
import { hiddenAuthorFor, statusReadableBy } from "../../policy/visibility";

export interface QuotePage {
  /** The quoting statuses to render, in page order. */
  statusIds: string[];
  firstCursor?: string;
  lastCursor?: string;
  full: boolean;
}

export async function listQuotes(db: DB, statusId: string, viewerId: string, page: Page): Promise<QuotePage> {
  const conds = [eq(quotes.quotedStatusId, statusId), eq(quotes.state, "accepted"), cursorWhere(quotes.id, page)];
  const [root, rows] = await db.batch([
    db
      .select({ id: statuses.id, accountId: statuses.accountId })
      .from(statuses)
      .where(and(eq(statuses.id, statusId), statusReadableBy(viewerId)))
      .limit(1),
    db
      .select({ id: quotes.id, statusId: quotes.statusId, hidden: sql<number>`${hiddenAuthorFor(viewerId, sql`quotes.account_id`)}` })
      .from(quotes)
      .where(and(...conds))
      .orderBy(cursorOrder(quotes.id, page))
      .limit(page.limit),
  ]);
  const status = root[0];
  if (!status) throw notFound();
  const list = inPageOrder(rows, page);
  const shown = status.accountId === viewerId ? list : list.filter((r) => !r.hidden);
  return {
    statusIds: shown.map((r) => r.statusId),
    firstCursor: list[0]?.id,
    lastCursor: list[list.length - 1]?.id,
    full: rows.length === page.limit,
  };
}

/** A QuoteAuthorization a local author granted and has not revoked: the uris it ties together, or null. */
export async function grantedAuthorization(db: DB, quotedAccountId: string, quoteId: string): Promise<{ quotingUri: string; quotedUri: string } | null> {
  const [row] = await db
    .select({ quotingUri: sql<string>`(SELECT s.uri FROM statuses s WHERE s.id = ${quotes.statusId})`, quotedUri: statuses.uri })
    .from(quotes)
    .innerJoin(statuses, eq(statuses.id, quotes.quotedStatusId))
    .where(and(eq(quotes.id, quoteId), eq(quotes.quotedAccountId, quotedAccountId), eq(quotes.state, "accepted")))
    .limit(1);
  return row?.quotingUri ? row : null;
}
