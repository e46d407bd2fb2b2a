// Content filters (Mastodon's CustomFilter, CustomFilterKeyword, CustomFilterStatus). A filter belongs to one account;
// its keywords and statuses carry the owner's account_id too, so ownership checks and the per-page load in
// renderStatuses' batch (src/entities/statuses/status.ts) are one indexed lookup each. Hand-written migration:
// migrations/0003_filters.sql.
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

export type FilterContext = "home" | "notifications" | "public" | "thread" | "account";
export type FilterAction = "warn" | "hide" | "blur";

export const customFilters = lazyTable(() =>
  sqliteTable(
    "custom_filters",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      title: text("title").notNull(),
      context: json<FilterContext[]>()("context").notNull(),
      action: text("action").$type<FilterAction>().notNull().default("warn"),
      expiresAt: ms("expires_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("custom_filters_account").on(t.accountId, t.id)],
  ),
);

export const customFilterKeywords = lazyTable(() =>
  sqliteTable(
    "custom_filter_keywords",
    {
      id: id("id").primaryKey(),
      customFilterId: id("custom_filter_id").notNull(),
      accountId: id("account_id").notNull(),
      keyword: text("keyword").notNull(),
      wholeWord: bool("whole_word").notNull().default(true),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("custom_filter_keywords_filter").on(t.customFilterId, t.id), index("custom_filter_keywords_account").on(t.accountId)],
  ),
);

export const customFilterStatuses = lazyTable(() =>
  sqliteTable(
    "custom_filter_statuses",
    {
      id: id("id").primaryKey(),
      customFilterId: id("custom_filter_id").notNull(),
      accountId: id("account_id").notNull(),
      statusId: id("status_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [
      uniqueIndex("custom_filter_statuses_pair").on(t.customFilterId, t.statusId),
      index("custom_filter_statuses_account").on(t.accountId, t.statusId),
      index("custom_filter_statuses_status").on(t.statusId),
    ],
  ),
);
