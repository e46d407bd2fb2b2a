// Read side of direct-message conversations (account_conversations, written by the fan-out of direct statuses).
// Pages are keyed by last_status_id, as Mastodon pages /api/v1/conversations.
import { and, asc, desc, eq, gt, lt } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountConversations } from "../../db/schema";
import type { Page } from "../../lib/http/pagination";

export type AccountConversationRow = typeof accountConversations.$inferSelect;

export interface ConversationPage {
  rows: AccountConversationRow[];
  /** Cursors for the Link header: last_status_id of the first and last row. */
  first?: string;
  last?: string;
  full: boolean;
}

/** One page of an account's conversations, most recently active first. One query. */
export async function conversationPage(db: DB, accountId: string, page: Page): Promise<ConversationPage> {
  const t = accountConversations;
  const conds = [eq(t.accountId, accountId)];
  if (page.maxId) conds.push(lt(t.lastStatusId, page.maxId));
  if (page.minId) conds.push(gt(t.lastStatusId, page.minId));
  else if (page.sinceId) conds.push(gt(t.lastStatusId, page.sinceId));
  const rows = await db
    .select()
    .from(t)
    .where(and(...conds))
    .orderBy(page.minId ? asc(t.lastStatusId) : desc(t.lastStatusId))
    .limit(page.limit);
  if (page.minId) rows.reverse();
  return { rows, first: rows[0]?.lastStatusId, last: rows[rows.length - 1]?.lastStatusId, full: rows.length >= page.limit };
}
