// Account data export (archives) and import (bulk imports): migrations/0023_export_import.sql.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, json, ms } from "../types";

/** Per archive phase (outbox, likes, bookmarks): JSON parts written to R2, and the items they hold. */
export type BackupParts = Partial<Record<"outbox" | "likes" | "bookmarks", { parts: number; items: number }>>;

export const backups = lazyTable(() =>
  sqliteTable(
    "backups",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      state: text("state").notNull().default("pending"), // pending | ready | failed
      phase: text("phase").notNull().default("outbox"), // outbox | likes | bookmarks | assemble | done
      cursor: text("cursor"),
      parts: json<BackupParts>()("parts").notNull().default(sql`'{}'`),
      fileKey: text("file_key"),
      fileSize: integer("file_size"),
      error: text("error"),
      createdAt: ms("created_at").notNull(),
      finishedAt: ms("finished_at"),
    },
    (t) => [index("backups_account").on(t.accountId, t.id)],
  ),
);

export const bulkImports = lazyTable(() =>
  sqliteTable(
    "bulk_imports",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      type: text("type").notNull(), // following | blocking | muting | domain_blocking | bookmarks | lists
      overwrite: integer("overwrite", { mode: "boolean" }).notNull().default(false),
      state: text("state").notNull().default("in_progress"), // in_progress | finished
      phase: text("phase").notNull().default("rows"), // prune (overwrite: existing relations not in the file) | rows
      cursor: text("cursor"),
      originalFilename: text("original_filename"),
      totalItems: integer("total_items").notNull().default(0),
      processedItems: integer("processed_items").notNull().default(0),
      importedItems: integer("imported_items").notNull().default(0),
      failedItems: integer("failed_items").notNull().default(0),
      createdAt: ms("created_at").notNull(),
      finishedAt: ms("finished_at"),
    },
    (t) => [index("bulk_imports_account").on(t.accountId, t.id)],
  ),
);

export const bulkImportRows = lazyTable(() =>
  sqliteTable(
    "bulk_import_rows",
    {
      importId: id("import_id").notNull(),
      seq: integer("seq").notNull(),
      key: text("key").notNull(),
      data: text("data").notNull(),
      /** Why the row could not be applied (migrations/0046); rows applied are deleted. */
      error: text("error"),
    },
    (t) => [primaryKey({ columns: [t.importId, t.seq] }), index("bulk_import_rows_key").on(t.importId, t.key)],
  ),
);

export type BackupRow = typeof backups.$inferSelect;
export type BulkImportRow = typeof bulkImports.$inferSelect;
