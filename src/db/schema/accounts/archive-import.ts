// Archive imports (a Mastodon or Tern account archive read back): migrations/0048_archive_imports.sql.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

/** Per source file (outbox, likes, bookmarks): the parts the split wrote to R2 and the items they hold. */
export type ArchiveParts = Partial<Record<"outbox" | "likes" | "bookmarks", { parts: number; items: number }>>;

export const archiveImports = lazyTable(() =>
  sqliteTable(
    "archive_imports",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      state: text("state").notNull().default("in_progress"), // uploading | in_progress | finished | failed
      phase: text("phase").notNull().default("split"), // split | statuses | likes | bookmarks | threads | profile | done
      kind: text("kind").notNull(), // zip | outbox
      fileKey: text("file_key").notNull(),
      fileSize: integer("file_size").notNull(),
      originalFilename: text("original_filename"),
      actorUri: text("actor_uri"),
      takeProfile: bool("take_profile").notNull().default(false),
      /** R2's id of a multipart upload while `state` is uploading. */
      uploadId: text("upload_id"),
      parts: json<ArchiveParts>()("parts").notNull().default(sql`'{}'`),
      cursor: text("cursor"),
      totalItems: integer("total_items").notNull().default(0),
      processedItems: integer("processed_items").notNull().default(0),
      importedItems: integer("imported_items").notNull().default(0),
      skippedItems: integer("skipped_items").notNull().default(0),
      failedItems: integer("failed_items").notNull().default(0),
      /** Rounds that failed in a row; the import fails at ARCHIVE_MAX_ATTEMPTS. */
      attempts: integer("attempts").notNull().default(0),
      /** D1 rows written by the import so far (D1's own count), and within `budget_day` (days since the epoch, UTC). */
      rowsWritten: integer("rows_written").notNull().default(0),
      budgetDay: integer("budget_day").notNull().default(0),
      budgetRows: integer("budget_rows").notNull().default(0),
      error: text("error"),
      createdAt: ms("created_at").notNull(),
      finishedAt: ms("finished_at"),
    },
    (t) => [
      index("archive_imports_account").on(t.accountId, t.id),
      index("archive_imports_left").on(t.createdAt).where(sql`state IN ('uploading', 'failed') AND phase <> 'done'`),
    ],
  ),
);

export const archiveImportItems = lazyTable(() =>
  sqliteTable(
    "archive_import_items",
    {
      accountId: id("account_id").notNull(),
      originalUri: text("original_uri").notNull(),
      statusId: id("status_id").notNull(),
      inReplyToUri: text("in_reply_to_uri"),
    },
    (t) => [
      primaryKey({ columns: [t.accountId, t.originalUri] }),
      index("archive_import_items_unlinked").on(t.statusId).where(sql`in_reply_to_uri IS NOT NULL`),
    ],
  ),
);

export type ArchiveImportRow = typeof archiveImports.$inferSelect;
