// Reading preferences from the settings page (the `reading:*` keys GET /api/v1/preferences reports). Posting defaults
// (visibility, sensitive, language) are written by updateProfile, as the API's update_credentials `source[...]` does.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { users, type UserRow, type UserSettings } from "../../db/schema";

export const EXPAND_MEDIA = ["default", "show_all", "hide_all"] as const;
export type ExpandMedia = (typeof EXPAND_MEDIA)[number];

export interface ReadingPreferences {
  expandSpoilers?: boolean;
  expandMedia?: ExpandMedia;
  /** Staff notice mails (Mastodon's notification_emails.report, .pending_account, .trends); staff only. */
  staffMails?: { report: boolean; pendingAccount: boolean; trends: boolean };
}

export async function updateReadingPreferences(db: DB, user: UserRow, input: ReadingPreferences): Promise<UserSettings> {
  const settings: UserSettings = { ...(user.settings ?? {}) };
  if (input.expandSpoilers !== undefined) settings["reading:expand:spoilers"] = input.expandSpoilers;
  if (input.expandMedia !== undefined && EXPAND_MEDIA.includes(input.expandMedia)) settings["reading:expand:media"] = input.expandMedia;
  if (input.staffMails) {
    settings["notification_emails:report"] = input.staffMails.report;
    settings["notification_emails:pending_account"] = input.staffMails.pendingAccount;
    settings["notification_emails:trends"] = input.staffMails.trends;
  }
  await db.update(users).set({ settings, updatedAt: Date.now() }).where(eq(users.id, user.id));
  return settings;
}
