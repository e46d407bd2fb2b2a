// Announcements as readers list them: published ones in Mastodon's chronological order (by their start, else by
// when they were published), without the ones the reader dismissed unless asked.
import { sql } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { DB } from "../../db/client";
import { announcements } from "../../db/schema";
import { padId } from "../../lib/text/ids";
import type { AnnouncementRow } from "../../db/schema";

const chronological = lazy(
  () => sql`coalesce(${announcements.startsAt}, ${announcements.publishedAt}, ${announcements.createdAt}) ASC, ${announcements.id} ASC`,
);

/** Published announcements for `accountId`; `withDismissed` keeps the dismissed ones. One query. */
export async function publishedAnnouncements(db: DB, accountId: string, withDismissed: boolean): Promise<AnnouncementRow[]> {
  const notDismissed = sql`NOT EXISTS (SELECT 1 FROM announcement_dismissals d WHERE d.account_id = ${padId(accountId)} AND d.announcement_id = ${announcements.id})`;
  return db
    .select()
    .from(announcements)
    .where(withDismissed ? sql`${announcements.published} = 1` : sql`${announcements.published} = 1 AND ${notDismissed}`)
    .orderBy(chronological())
    .limit(200);
}

/** Every announcement, newest first (staff). */
export async function allAnnouncements(db: DB, limit = 200): Promise<AnnouncementRow[]> {
  return db.select().from(announcements).orderBy(sql`${announcements.id} DESC`).limit(limit);
}
