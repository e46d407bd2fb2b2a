-- inbox_seen keyed by (day, activity_id), with no other index: a seen activity is one D1 row written, not two (its
-- row and the received_at index the 5-minute purge used). The purge deletes whole days, a range of the key; the seen
-- check probes the key once per day kept (15 probes of a few b-tree pages, src/federation/inbox-seen.ts). The table
-- holds 14 days of incoming activities: the copy below writes each of them once more.
CREATE TABLE `inbox_seen_by_day` (
	`day` integer NOT NULL,
	`activity_id` text NOT NULL,
	PRIMARY KEY(`day`, `activity_id`)
) WITHOUT ROWID;
INSERT OR IGNORE INTO `inbox_seen_by_day` (`day`, `activity_id`) SELECT `received_at` / 86400000, `activity_id` FROM `inbox_seen`;
DROP TABLE `inbox_seen`;
ALTER TABLE `inbox_seen_by_day` RENAME TO `inbox_seen`;
