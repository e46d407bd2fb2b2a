-- The audit log names its targets as Mastodon's Admin::ActionLog#human_identifier does (an account's handle, a domain,
-- a role's name ...), read from the target when the row is written (src/services/admin/log.ts), so an entry still names
-- what it changed once the target is deleted. NULL for rows written before, and for targets without a name (the server
-- settings form).
ALTER TABLE `admin_action_logs` ADD `human_identifier` text;
--> statement-breakpoint
-- An import row that could not be applied stays, with why (Mastodon keeps failed BulkImportRows and offers them as a
-- CSV); applied rows are still deleted. The rows phase walks `seq` upwards from `bulk_imports.cursor`, so kept rows are
-- not read again.
ALTER TABLE `bulk_import_rows` ADD `error` text;
