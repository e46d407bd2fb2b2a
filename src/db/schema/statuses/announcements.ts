import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

/** Staff announcements (migrations/0010_announcements.sql). */
export const announcements = lazyTable(() =>
  sqliteTable(
    "announcements",
    {
      id: id("id").primaryKey(),
      /** The staff's source text. */
      text: text("text").notNull(),
      /** Rendered HTML (links, mentions, hashtags), as statuses are. */
      content: text("content").notNull(),
      /** JSON `{ mentions: string[], tags: string[] }`: what the rendering linked. */
      links: text("links").notNull().default("{}"),
      published: bool("published").notNull().default(false),
      allDay: bool("all_day").notNull().default(false),
      startsAt: ms("starts_at"),
      endsAt: ms("ends_at"),
      publishedAt: ms("published_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("announcements_published").on(t.published, t.publishedAt)],
  ),
);

export const announcementDismissals = lazyTable(() =>
  sqliteTable(
    "announcement_dismissals",
    {
      accountId: id("account_id").notNull(),
      announcementId: id("announcement_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.announcementId] })],
  ),
);

export const announcementReactions = lazyTable(() =>
  sqliteTable(
    "announcement_reactions",
    {
      accountId: id("account_id").notNull(),
      announcementId: id("announcement_id").notNull(),
      /** A Unicode emoji, a local custom emoji's shortcode, or `shortcode@domain` for a remote one. */
      name: text("name").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.announcementId, t.name, t.accountId] }), index("announcement_reactions_account").on(t.accountId, t.announcementId)],
  ),
);

export type AnnouncementRow = typeof announcements.$inferSelect;
