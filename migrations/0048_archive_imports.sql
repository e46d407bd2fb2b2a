-- Importing a Mastodon (or Tern) account archive (src/services/data/import-archive*.ts): the uploaded file stays in R2
-- under `archive_imports/<id>/` until the import ends; the import is worked through in bounded rounds by the
-- `import_archive` effect. `phase`: split (outbox.json, likes.json and bookmarks.json cut into parts in R2) → statuses
-- (one part a round) → likes → bookmarks → threads (replies whose parent came later in the file) → profile → done.
-- `state` 'uploading': a multipart upload under way (`upload_id`, R2's), not checked yet.
-- `cursor` is "<part>:<item>" within the phase; the counters are what the settings page shows.
CREATE TABLE `archive_imports` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `state` text DEFAULT 'in_progress' NOT NULL,
  `phase` text DEFAULT 'split' NOT NULL,
  `kind` text NOT NULL,
  `file_key` text NOT NULL,
  `file_size` integer NOT NULL,
  `original_filename` text,
  `actor_uri` text,
  `take_profile` integer DEFAULT 0 NOT NULL,
  `upload_id` text,
  `parts` text DEFAULT '{}' NOT NULL,
  `cursor` text,
  `total_items` integer DEFAULT 0 NOT NULL,
  `processed_items` integer DEFAULT 0 NOT NULL,
  `imported_items` integer DEFAULT 0 NOT NULL,
  `skipped_items` integer DEFAULT 0 NOT NULL,
  `failed_items` integer DEFAULT 0 NOT NULL,
  `attempts` integer DEFAULT 0 NOT NULL,
  `rows_written` integer DEFAULT 0 NOT NULL,
  `budget_day` integer DEFAULT 0 NOT NULL,
  `budget_rows` integer DEFAULT 0 NOT NULL,
  `error` text,
  `created_at` integer NOT NULL,
  `finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `archive_imports_account` ON `archive_imports` (`account_id`,`id`);
--> statement-breakpoint
-- One row per imported item, keyed by the item's original URI: importing the same archive again imports nothing twice,
-- and a reply found before its parent is threaded once the parent is in (`in_reply_to_uri`, cleared when linked): at
-- the import's end when the parent is on this server, else when someone opens the reply's context (the backfill).
CREATE TABLE `archive_import_items` (
  `account_id` text NOT NULL,
  `original_uri` text NOT NULL,
  `status_id` text NOT NULL,
  `in_reply_to_uri` text,
  PRIMARY KEY(`account_id`, `original_uri`)
) WITHOUT ROWID;
--> statement-breakpoint
-- A status whose parent is still to be found (the context's backfill resolves it: src/federation/remote/backfill.ts).
CREATE INDEX `archive_import_items_unlinked` ON `archive_import_items` (`status_id`) WHERE `in_reply_to_uri` IS NOT NULL;
