-- Announcements (hand-written; src/db/schema/announcements.ts is the Drizzle side): staff notices every local user
-- sees, with per-account dismissals and emoji reactions, as Mastodon's announcements, announcement_mutes and
-- announcement_reactions.
CREATE TABLE `announcements` (
	`id` text PRIMARY KEY NOT NULL,
	`text` text NOT NULL,
	`content` text NOT NULL,
	-- JSON: { "mentions": [account ids], "tags": [names] } found when the text was rendered
	`links` text DEFAULT '{}' NOT NULL,
	`published` integer DEFAULT 0 NOT NULL,
	`all_day` integer DEFAULT 0 NOT NULL,
	`starts_at` integer,
	`ends_at` integer,
	`published_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `announcements_published` ON `announcements` (`published`, `published_at`);
--> statement-breakpoint
CREATE TABLE `announcement_dismissals` (
	`account_id` text NOT NULL,
	`announcement_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `announcement_id`)
);
--> statement-breakpoint
CREATE TABLE `announcement_reactions` (
	`account_id` text NOT NULL,
	`announcement_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`announcement_id`, `name`, `account_id`)
);
--> statement-breakpoint
CREATE INDEX `announcement_reactions_account` ON `announcement_reactions` (`account_id`, `announcement_id`);
