-- Account data export and import (Mastodon's Backup and BulkImport). `backups`: one archive of an account's actor,
-- outbox, likes, bookmarks and media, built in bounded rounds by the `export_archive` effect (phase + cursor say where
-- the next round starts; `parts` counts the JSON parts written to R2 per phase) and assembled into one zip object.
-- `bulk_imports` / `bulk_import_rows`: an uploaded CSV, its rows stored at upload (one batch: all or nothing) and
-- processed by the `import_rows` effect, at most 20 rows a job; a processed row is deleted, the counters say how far.
-- `key` is the row's normalised subject (acct, domain, status URI, list title + acct) so the overwrite mode can ask
-- "is this existing relation in the file" by index.
CREATE TABLE `backups` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `state` text NOT NULL DEFAULT 'pending',
  `phase` text NOT NULL DEFAULT 'outbox',
  `cursor` text,
  `parts` text NOT NULL DEFAULT '{}',
  `file_key` text,
  `file_size` integer,
  `error` text,
  `created_at` integer NOT NULL,
  `finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `backups_account` ON `backups` (`account_id`, `id`);
--> statement-breakpoint
CREATE TABLE `bulk_imports` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `type` text NOT NULL,
  `overwrite` integer NOT NULL DEFAULT 0,
  `state` text NOT NULL DEFAULT 'in_progress',
  `phase` text NOT NULL DEFAULT 'rows',
  `cursor` text,
  `original_filename` text,
  `total_items` integer NOT NULL DEFAULT 0,
  `processed_items` integer NOT NULL DEFAULT 0,
  `imported_items` integer NOT NULL DEFAULT 0,
  `failed_items` integer NOT NULL DEFAULT 0,
  `created_at` integer NOT NULL,
  `finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `bulk_imports_account` ON `bulk_imports` (`account_id`, `id`);
--> statement-breakpoint
CREATE TABLE `bulk_import_rows` (
  `import_id` text NOT NULL,
  `seq` integer NOT NULL,
  `key` text NOT NULL,
  `data` text NOT NULL,
  PRIMARY KEY (`import_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `bulk_import_rows_key` ON `bulk_import_rows` (`import_id`, `key`);
