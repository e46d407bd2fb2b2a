// Direct-message conversations, the write side the API offers: mark one read or unread, remove one. (They are created and
// advanced by the fan-out of direct statuses, src/timelines/fanout.ts, and fixed up when a status is deleted.)
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { deleteOwnRow, ownedBy } from "../../db/owned";
import { accountConversations } from "../../db/schema";
import { padId } from "../../lib/text/ids";
import type { AccountConversationRow } from "../../queries/notifications/conversations";

/** Marks the account's conversation read (or unread); the row as it is now, or null when it is not theirs. */
export async function markConversationRead(db: DB, accountId: string, id: number, unread = false): Promise<AccountConversationRow | null> {
  const [row] = await db
    .update(accountConversations)
    .set({ unread })
    .where(ownedBy(accountConversations, id, accountId))
    .returning();
  return row ?? null;
}

/** Removes the account's conversation (a later message in the thread brings it back); false when not theirs. */
export async function removeConversation(db: DB, accountId: string, id: number): Promise<boolean> {
  return deleteOwnRow(db, accountConversations, id, accountId);
}

/**
 * In the batch that deletes a status (before or after its row goes): conversations whose newest status it was move back to the
 * thread's newest remaining direct status their owner wrote or was mentioned in, and those with none left go.
 */
export function conversationsAfterDeleteStatements(db: DB, statusId: string) {
  const p = padId(statusId);
  return [
    db.run(sql`UPDATE account_conversations SET last_status_id = coalesce((
        SELECT max(s.id) FROM statuses s
        WHERE s.conversation_id = account_conversations.conversation_id AND s.id <> ${p} AND s.visibility = 'direct' AND s.reblog_of_id IS NULL
          AND (s.account_id = account_conversations.account_id
               OR EXISTS (SELECT 1 FROM mentions m WHERE m.status_id = s.id AND m.account_id = account_conversations.account_id))), '')
      WHERE last_status_id = ${p}`),
    db.run(sql`DELETE FROM account_conversations WHERE last_status_id = ''`),
  ] as const;
}
