-- Content filters (hand-written; src/db/schema/filters.ts is the Drizzle side). Mastodon's custom_filters,
-- custom_filter_keywords and custom_filter_statuses; keywords and statuses carry the owner's account_id so that
-- ownership checks and the per-page load of a viewer's filters are single index lookups.
CREATE TABLE `custom_filters` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`context` text NOT NULL,
	`action` text DEFAULT 'warn' NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `custom_filters_account` ON `custom_filters` (`account_id`, `id`);
--> statement-breakpoint
CREATE TABLE `custom_filter_keywords` (
	`id` text PRIMARY KEY NOT NULL,
	`custom_filter_id` text NOT NULL,
	`account_id` text NOT NULL,
	`keyword` text NOT NULL,
	`whole_word` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `custom_filter_keywords_filter` ON `custom_filter_keywords` (`custom_filter_id`, `id`);
--> statement-breakpoint
CREATE INDEX `custom_filter_keywords_account` ON `custom_filter_keywords` (`account_id`);
--> statement-breakpoint
CREATE TABLE `custom_filter_statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`custom_filter_id` text NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_filter_statuses_pair` ON `custom_filter_statuses` (`custom_filter_id`, `status_id`);
--> statement-breakpoint
CREATE INDEX `custom_filter_statuses_account` ON `custom_filter_statuses` (`account_id`, `status_id`);
--> statement-breakpoint
CREATE INDEX `custom_filter_statuses_status` ON `custom_filter_statuses` (`status_id`);
--> statement-breakpoint
-- A deleted status leaves no status filter behind (Mastodon's foreign key cascades the same way).
CREATE TRIGGER `custom_filter_statuses_status_deleted` AFTER DELETE ON `statuses` BEGIN
  DELETE FROM `custom_filter_statuses` WHERE `status_id` = OLD.`id`;
END;
