// Private notes about other accounts (shown only to their author, in the relationship).
import { and, eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountNotes } from "../../db/schema";
import type { MastodonRelationship } from "../../entities/accounts/relationship";
import { cleanText } from "../../lib/text/text";
import { writeThenRelationship } from "./follows";
import { loadPair } from "./relationships";

export const MAX_NOTE_CHARS = 2000;

export async function setAccountNote(db: DB, viewerId: string, targetId: string, comment: string): Promise<MastodonRelationship> {
  await loadPair(db, viewerId, targetId);
  const text = cleanText(comment).trim();
  const now = Date.now();
  const stmt = text
    ? db
        .insert(accountNotes)
        .values({ accountId: viewerId, targetAccountId: targetId, comment: text, updatedAt: now })
        .onConflictDoUpdate({ target: [accountNotes.accountId, accountNotes.targetAccountId], set: { comment: text, updatedAt: now } })
    : db.delete(accountNotes).where(and(eq(accountNotes.accountId, viewerId), eq(accountNotes.targetAccountId, targetId)));
  return writeThenRelationship(db, [stmt], viewerId, targetId);
}
