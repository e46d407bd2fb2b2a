-- Two more rows written less, as in 0032-0034 (every index entry is a D1 row written, a NULL's included):
--
-- statuses_reblog_of holds boosts only. Every query of it names the boosted status (`reblog_of_id = ?`, `IN`, a join
-- on it), which implies IS NOT NULL, so SQLite uses it as before; the NULL entries of every status that is not a boost
-- were written with the status and read by nothing. One row written less per post, local or remote.
--
-- inbox_items becomes a WITHOUT ROWID table: an item is stored, read by its id and deleted once processed, so the
-- table is nearly empty and its id, a TEXT primary key, was written twice (the row and the key's index). One row
-- written less per incoming activity. Its rows are large (the body), which WITHOUT ROWID tolerates at this size; the
-- rebuild copies only the few items waiting. Nothing references the table; it has no triggers.
DROP INDEX `statuses_reblog_of`;
CREATE INDEX `statuses_reblog_of` ON `statuses` (`reblog_of_id`,`account_id`) WHERE reblog_of_id IS NOT NULL;

CREATE TABLE `inbox_items_clustered` (
	`id` text PRIMARY KEY NOT NULL,
	`signer_account_id` text NOT NULL,
	`body` text NOT NULL,
	`received_at` integer NOT NULL
) WITHOUT ROWID;
INSERT INTO `inbox_items_clustered` (`id`, `signer_account_id`, `body`, `received_at`)
	SELECT `id`, `signer_account_id`, `body`, `received_at` FROM `inbox_items`;
DROP TABLE `inbox_items`;
ALTER TABLE `inbox_items_clustered` RENAME TO `inbox_items`;
