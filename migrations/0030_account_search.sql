-- Account search by display-name word prefix on SQLite FTS5 (issue 12: a `LIKE '% p%'` on display names scanned every
-- account). src/queries/search.ts (`searchAccounts`) reads it, docs/architecture.md ("Full-text search") explains it.
--
-- `account_search` holds one row per account: its display name, keyed by the account id as an INTEGER (account ids
-- are int64 snowflakes, so the rowid is exact and `printf('%020d', id)` is the padded TEXT key of `accounts`). Triggers
-- on `accounts` keep it, whatever wrote the account (sign-up, profile edits, remote actors inserted or updated by
-- federation, admin tools, removal): nothing in the services needs to know about it.
--
-- `accounts_fts` is an external-content FTS5 index over it (the same pattern as `statuses_fts` in 0018): derived data
-- that backups skip and a restore rebuilds (`scripts/backup.mjs`). No porter stemming: the index answers prefixes of
-- words as typed; `remove_diacritics 2` lets "zoe" find "Zoë"; prefix indexes for 1-3 characters keep the short
-- prefixes typed first (autocompletion) one doclist each rather than a merge of every word they start.
CREATE TABLE `account_search` (
	`id` integer PRIMARY KEY NOT NULL,
	`display_name` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE VIRTUAL TABLE `accounts_fts` USING fts5(
	`display_name`,
	content = 'account_search',
	content_rowid = 'id',
	tokenize = 'unicode61 remove_diacritics 2',
	prefix = '1 2 3'
);
--> statement-breakpoint
INSERT INTO `account_search` (`id`, `display_name`) SELECT CAST(`id` AS INTEGER), `display_name` FROM `accounts`;
--> statement-breakpoint
INSERT INTO `accounts_fts`(`accounts_fts`) VALUES ('rebuild');
--> statement-breakpoint
-- The index follows `account_search` (the usual external-content triggers: a delete must give the indexed text).
CREATE TRIGGER `account_search_after_insert` AFTER INSERT ON `account_search` BEGIN
	INSERT INTO `accounts_fts`(`rowid`, `display_name`) VALUES (NEW.`id`, NEW.`display_name`);
END;
--> statement-breakpoint
CREATE TRIGGER `account_search_after_delete` AFTER DELETE ON `account_search` BEGIN
	INSERT INTO `accounts_fts`(`accounts_fts`, `rowid`, `display_name`) VALUES ('delete', OLD.`id`, OLD.`display_name`);
END;
--> statement-breakpoint
CREATE TRIGGER `account_search_after_update` AFTER UPDATE ON `account_search` BEGIN
	INSERT INTO `accounts_fts`(`accounts_fts`, `rowid`, `display_name`) VALUES ('delete', OLD.`id`, OLD.`display_name`);
	INSERT INTO `accounts_fts`(`rowid`, `display_name`) VALUES (NEW.`id`, NEW.`display_name`);
END;
--> statement-breakpoint
-- `account_search` follows `accounts`. An upsert that sets the same name again (a remote actor refetched) changes
-- nothing in the index (the WHEN).
CREATE TRIGGER `accounts_search_after_insert` AFTER INSERT ON `accounts` BEGIN
	INSERT INTO `account_search` (`id`, `display_name`) VALUES (CAST(NEW.`id` AS INTEGER), NEW.`display_name`);
END;
--> statement-breakpoint
CREATE TRIGGER `accounts_search_after_update` AFTER UPDATE OF `display_name` ON `accounts`
WHEN OLD.`display_name` IS NOT NEW.`display_name` BEGIN
	UPDATE `account_search` SET `display_name` = NEW.`display_name` WHERE `id` = CAST(NEW.`id` AS INTEGER);
END;
--> statement-breakpoint
CREATE TRIGGER `accounts_search_after_delete` AFTER DELETE ON `accounts` BEGIN
	DELETE FROM `account_search` WHERE `id` = CAST(OLD.`id` AS INTEGER);
END;
