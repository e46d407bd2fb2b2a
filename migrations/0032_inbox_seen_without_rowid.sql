-- inbox_seen (every processed activity's id, kept 14 days) as a WITHOUT ROWID table: its key is the activity id, so a
-- rowid table kept each id twice, in the row and in the primary key's index, and an insert wrote three rows (the row,
-- that index, inbox_seen_received). Clustered on the key it writes two: one D1 row written less per incoming activity
-- (3,000 a day on the bench's single-user day, rows written being the free plan's tightest line). The table is small
-- (pruned after 14 days) and nothing references it, so it is copied whole.
CREATE TABLE `inbox_seen_clustered` (
	`activity_id` text PRIMARY KEY NOT NULL,
	`received_at` integer NOT NULL
) WITHOUT ROWID;
INSERT INTO `inbox_seen_clustered` (`activity_id`, `received_at`) SELECT `activity_id`, `received_at` FROM `inbox_seen`;
DROP TABLE `inbox_seen`;
ALTER TABLE `inbox_seen_clustered` RENAME TO `inbox_seen`;
CREATE INDEX `inbox_seen_received` ON `inbox_seen` (`received_at`);
