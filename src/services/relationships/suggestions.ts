// Dismissing a follow suggestion: that account is not suggested again (Mastodon's follow_recommendation_mutes).
import type { DB } from "../../db/client";
import { suggestionDismissals } from "../../db/schema";

export async function dismissSuggestion(db: DB, accountId: string, targetAccountId: string): Promise<void> {
  await db.insert(suggestionDismissals).values({ accountId, targetAccountId, createdAt: Date.now() }).onConflictDoNothing();
}
