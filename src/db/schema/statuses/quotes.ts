// Quote posts (Mastodon 4.5's Quote model, FEP-044f): migrations/0022_quotes.sql.
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

export type QuoteState = "pending" | "accepted" | "rejected" | "revoked";

export const quotes = lazyTable(() =>
  sqliteTable(
    "quotes",
    {
      id: id("id").primaryKey(),
      /** The quoting status. */
      statusId: id("status_id").notNull(),
      accountId: id("account_id").notNull(),
      /** Null once the quoted status is gone (or when it could not be had). */
      quotedStatusId: id("quoted_status_id"),
      quotedAccountId: id("quoted_account_id"),
      state: text("state").$type<QuoteState>().notNull().default("pending"),
      /** The remote QuoteAuthorization's id; null for quotes of local statuses (their id is derived from the row). */
      approvalUri: text("approval_uri"),
      /** The QuoteRequest's id. */
      activityUri: text("activity_uri"),
      legacy: bool("legacy").notNull().default(false),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [
      uniqueIndex("quotes_status").on(t.statusId),
      index("quotes_quoted").on(t.quotedStatusId, t.state, t.id),
      index("quotes_approval_uri").on(t.approvalUri),
      index("quotes_activity_uri").on(t.activityUri),
    ],
  ),
);

export type QuoteRow = typeof quotes.$inferSelect;
