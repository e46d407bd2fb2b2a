-- Admin API part B (hand-written; the Drizzle side is in src/db/schema/{instance,statuses,trends}.ts).
-- Reports: who resolved a report (Mastodon's action_taken_by_account_id) and indexes for the admin list's filters.
ALTER TABLE `reports` ADD COLUMN `action_taken_by_account_id` text;
--> statement-breakpoint
CREATE INDEX `reports_action_taken` ON `reports` (`action_taken_at`, `id`);
--> statement-breakpoint
CREATE INDEX `reports_account` ON `reports` (`account_id`, `id`);
--> statement-breakpoint
-- Trend review (Mastodon's reviewed_at / requested_review_at on tags, trendable on preview cards, statuses and
-- preview card providers). NULL trendable = not reviewed yet (still trends: Tern approves automatically until staff
-- reject); 0 = rejected (leaves the public trends); 1 = approved.
ALTER TABLE `tags` ADD COLUMN `reviewed_at` integer;
--> statement-breakpoint
ALTER TABLE `tags` ADD COLUMN `requested_review_at` integer;
--> statement-breakpoint
ALTER TABLE `preview_cards` ADD COLUMN `trendable` integer;
--> statement-breakpoint
CREATE TABLE `status_trend_reviews` (
	`status_id` text PRIMARY KEY NOT NULL,
	`trendable` integer NOT NULL,
	`reviewed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `status_trend_reviews_status_deleted` AFTER DELETE ON `statuses` BEGIN
	DELETE FROM `status_trend_reviews` WHERE `status_id` = OLD.`id`;
END;
--> statement-breakpoint
CREATE TABLE `preview_card_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`trendable` integer,
	`reviewed_at` integer,
	`requested_review_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `preview_card_providers_domain` ON `preview_card_providers` (`domain`);
