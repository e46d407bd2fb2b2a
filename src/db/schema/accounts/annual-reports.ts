// Annual reports (Wrapstodon): migrations/0049_annual_reports.sql.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, json, ms } from "../types";

export type AnnualReportState = "generating" | "available";

export const annualReports = lazyTable(() =>
  sqliteTable(
    "annual_reports",
    {
      accountId: id("account_id").notNull(),
      year: integer("year").notNull(),
      state: text("state").$type<AnnualReportState>().notNull(),
      /** The last status id counted by the rounds (generating only). */
      cursor: text("cursor"),
      /** The rounds' running totals (generating only). */
      progress: json<unknown>()("progress"),
      /** The report's data as served (available only). */
      data: json<unknown>()("data"),
      schemaVersion: integer("schema_version").notNull(),
      viewedAt: ms("viewed_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.year] })],
  ),
);

export type AnnualReportRow = typeof annualReports.$inferSelect;
