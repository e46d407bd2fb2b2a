import { sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex, integer, primaryKey } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

export const follows = lazyTable(() =>
  sqliteTable(
    "follows",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      showReblogs: bool("show_reblogs").notNull().default(true),
      notify: bool("notify").notNull().default(false),
      languages: json<string[] | null>()("languages"),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("follows_pair").on(t.accountId, t.targetAccountId), index("follows_target").on(t.targetAccountId, t.id)],
  ),
);

export const followRequests = lazyTable(() =>
  sqliteTable(
    "follow_requests",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      showReblogs: bool("show_reblogs").notNull().default(true),
      notify: bool("notify").notNull().default(false),
      languages: json<string[] | null>()("languages"),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("follow_requests_pair").on(t.accountId, t.targetAccountId), index("follow_requests_target").on(t.targetAccountId, t.id)],
  ),
);

export const blocks = lazyTable(() =>
  sqliteTable(
    "blocks",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("blocks_pair").on(t.accountId, t.targetAccountId), index("blocks_target").on(t.targetAccountId)],
  ),
);

export const mutes = lazyTable(() =>
  sqliteTable(
    "mutes",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      hideNotifications: bool("hide_notifications").notNull().default(true),
      expiresAt: ms("expires_at"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("mutes_pair").on(t.accountId, t.targetAccountId),
      // The cron expires temporary mutes.
      index("mutes_expires").on(t.expiresAt).where(sql`expires_at IS NOT NULL`),
    ],
  ),
);

/** A user's own domain blocks (POST /api/v1/domain_blocks). */
export const accountDomainBlocks = lazyTable(() =>
  sqliteTable(
    "account_domain_blocks",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      domain: text("domain").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("account_domain_blocks_pair").on(t.accountId, t.domain)],
  ),
);

export const accountNotes = lazyTable(() =>
  sqliteTable(
    "account_notes",
    {
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      comment: text("comment").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.targetAccountId] })],
  ),
);

/** Endorsements ("featured accounts"). */
export const accountPins = lazyTable(() =>
  sqliteTable(
    "account_pins",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("account_pins_pair").on(t.accountId, t.targetAccountId)],
  ),
);

export const favourites = lazyTable(() =>
  sqliteTable(
    "favourites",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      statusId: id("status_id").notNull(),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("favourites_pair").on(t.accountId, t.statusId),
      index("favourites_status").on(t.statusId, t.id),
      index("favourites_account").on(t.accountId, t.id),
    ],
  ),
);

export const bookmarks = lazyTable(() =>
  sqliteTable(
    "bookmarks",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      statusId: id("status_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("bookmarks_pair").on(t.accountId, t.statusId),
      index("bookmarks_account").on(t.accountId, t.id),
      // A deleted status's bookmarks (migrations/0039).
      index("bookmarks_status").on(t.statusId),
    ],
  ),
);

export const statusPins = lazyTable(() =>
  sqliteTable(
    "status_pins",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      statusId: id("status_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("status_pins_pair").on(t.accountId, t.statusId)],
  ),
);

export const conversationMutes = lazyTable(() =>
  sqliteTable(
    "conversation_mutes",
    {
      accountId: id("account_id").notNull(),
      conversationId: id("conversation_id").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.conversationId] })],
  ),
);

export const tagFollows = lazyTable(() =>
  sqliteTable(
    "tag_follows",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      tagId: id("tag_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("tag_follows_pair").on(t.accountId, t.tagId), index("tag_follows_tag").on(t.tagId)],
  ),
);

export const featuredTags = lazyTable(() =>
  sqliteTable(
    "featured_tags",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      tagId: id("tag_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("featured_tags_pair").on(t.accountId, t.tagId)],
  ),
);

export const lists = lazyTable(() =>
  sqliteTable(
    "lists",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      title: text("title").notNull(),
      repliesPolicy: text("replies_policy").notNull().default("list"), // followed | list | none
      exclusive: bool("exclusive").notNull().default(false),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("lists_account").on(t.accountId)],
  ),
);

export const listAccounts = lazyTable(() =>
  sqliteTable(
    "list_accounts",
    {
      id: id("id").primaryKey(),
      listId: id("list_id").notNull(),
      accountId: id("account_id").notNull(),
    },
    (t) => [uniqueIndex("list_accounts_pair").on(t.listId, t.accountId), index("list_accounts_account").on(t.accountId)],
  ),
);

export const markers = lazyTable(() =>
  sqliteTable(
    "markers",
    {
      accountId: id("account_id").notNull(),
      timeline: text("timeline").notNull(), // home | notifications
      lastReadId: id("last_read_id").notNull(),
      version: integer("version").notNull().default(0),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.timeline] })],
  ),
);

/** Follow suggestions an account dismissed (migrations/0012_suggestion_dismissals.sql). */
export const suggestionDismissals = lazyTable(() =>
  sqliteTable(
    "suggestion_dismissals",
    {
      accountId: id("account_id").notNull(),
      targetAccountId: id("target_account_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.targetAccountId] })],
  ),
);
