-- Preview cards and trends (hand-written; src/db/schema/trends.ts is the Drizzle side). Cards are fetched for the
-- first link of a status (src/services/preview-cards.ts); the cron scores tags, statuses and links into the three
-- small *_trends tables every 5th minute (src/trends/refresh.ts), and the API reads them (src/queries/trends.ts).
CREATE TABLE `preview_cards` (
	`id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`type` text DEFAULT 'link' NOT NULL,
	`link_type` text DEFAULT 'unknown' NOT NULL,
	`author_name` text DEFAULT '' NOT NULL,
	`author_url` text DEFAULT '' NOT NULL,
	`provider_name` text DEFAULT '' NOT NULL,
	`provider_url` text DEFAULT '' NOT NULL,
	`html` text DEFAULT '' NOT NULL,
	`width` integer DEFAULT 0 NOT NULL,
	`height` integer DEFAULT 0 NOT NULL,
	`image` text,
	`image_description` text DEFAULT '' NOT NULL,
	`embed_url` text DEFAULT '' NOT NULL,
	`language` text,
	`published_at` integer,
	`created_at` integer NOT NULL,
	`fetched_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `preview_cards_url` ON `preview_cards` (`url`);
--> statement-breakpoint
CREATE INDEX `preview_cards_fetched` ON `preview_cards` (`fetched_at`);
--> statement-breakpoint
CREATE TABLE `status_preview_cards` (
	`status_id` text PRIMARY KEY NOT NULL,
	`preview_card_id` text NOT NULL,
	`url` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `status_preview_cards_card` ON `status_preview_cards` (`preview_card_id`, `status_id`);
--> statement-breakpoint
CREATE INDEX `status_preview_cards_url` ON `status_preview_cards` (`url`);
--> statement-breakpoint
CREATE TABLE `tag_trends` (
	`tag_id` text PRIMARY KEY NOT NULL,
	`score` real NOT NULL,
	`max_score` real NOT NULL,
	`max_score_at` integer,
	`allowed` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tag_trends_score` ON `tag_trends` (`allowed`, `score`);
--> statement-breakpoint
CREATE TABLE `status_trends` (
	`status_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`score` real NOT NULL,
	`language` text,
	`allowed` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `status_trends_score` ON `status_trends` (`allowed`, `score`);
--> statement-breakpoint
CREATE TABLE `preview_card_trends` (
	`preview_card_id` text PRIMARY KEY NOT NULL,
	`score` real NOT NULL,
	`max_score` real NOT NULL,
	`max_score_at` integer,
	`language` text,
	`allowed` integer NOT NULL,
	`history` text DEFAULT '[]' NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `preview_card_trends_score` ON `preview_card_trends` (`allowed`, `score`);
--> statement-breakpoint
-- A removed status takes its card link and its trend row with it (every path that deletes statuses).
CREATE TRIGGER `status_preview_cards_status_deleted` AFTER DELETE ON `statuses` BEGIN
	DELETE FROM `status_preview_cards` WHERE `status_id` = OLD.`id`;
	DELETE FROM `status_trends` WHERE `status_id` = OLD.`id`;
END;
