-- home_feed and conversations as WITHOUT ROWID tables, for the same reason as inbox_seen (0032): each is read by its
-- TEXT primary key, which a rowid table keeps apart from the row, so every insert wrote it twice. Clustered on the key,
-- a home-feed entry is 3 D1 rows written instead of 4 (the row, home_feed_author, home_feed_status), a conversation 2
-- instead of 3; and a home timeline page reads its entries from the key itself, not the key then each row. Both rows
-- are small (ids and a timestamp), as WITHOUT ROWID wants. Nothing references either table; neither has triggers.
CREATE TABLE `home_feed_clustered` (
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`reblog_of_id` text,
	`author_id` text NOT NULL,
	PRIMARY KEY(`account_id`, `status_id`)
) WITHOUT ROWID;
INSERT INTO `home_feed_clustered` (`account_id`, `status_id`, `reblog_of_id`, `author_id`)
	SELECT `account_id`, `status_id`, `reblog_of_id`, `author_id` FROM `home_feed`;
DROP TABLE `home_feed`;
ALTER TABLE `home_feed_clustered` RENAME TO `home_feed`;
CREATE INDEX `home_feed_author` ON `home_feed` (`account_id`,`author_id`);
CREATE INDEX `home_feed_status` ON `home_feed` (`status_id`);
CREATE INDEX `home_feed_reblog` ON `home_feed` (`reblog_of_id`,`account_id`) WHERE reblog_of_id IS NOT NULL;

CREATE TABLE `conversations_clustered` (
	`id` text PRIMARY KEY NOT NULL,
	`uri` text,
	`created_at` integer NOT NULL
) WITHOUT ROWID;
INSERT INTO `conversations_clustered` (`id`, `uri`, `created_at`) SELECT `id`, `uri`, `created_at` FROM `conversations`;
DROP TABLE `conversations`;
ALTER TABLE `conversations_clustered` RENAME TO `conversations`;
CREATE INDEX `conversations_uri` ON `conversations` (`uri`);
