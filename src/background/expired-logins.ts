// The cron's sweep of sign-in state that has run out: OAuth authorization codes a day past their expiry (src/oauth/grants.ts
// makes and redeems them) and browser sessions past theirs (src/web/session-store.ts). Here, beside the cron, so that
// the cron reaches only the tables, not the OAuth and page layers above it.
import { lt, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { oauthAccessGrants, webSessions } from "../db/schema";

export async function purgeExpiredGrants(db: DB, now = Date.now()): Promise<void> {
  await db.delete(oauthAccessGrants).where(sql`${oauthAccessGrants.expiresAt} < ${now - 24 * 3600 * 1000}`);
}

export async function purgeExpiredWebSessions(db: DB, now = Date.now()): Promise<void> {
  await db.delete(webSessions).where(lt(webSessions.expiresAt, now));
}
