-- Full-text search of statuses on SQLite FTS5 (what Mastodon needs Elasticsearch for). src/services/search-index.ts
-- writes it, src/queries/search.ts reads it, docs/architecture.md ("Full-text search") explains the choices.
--
-- `status_search` holds one row per status (not boosts): its searchable plain text (content warning, text without
-- HTML, poll options, media descriptions), computed in JS and written by a statement in the same batch as the status
-- write. Its `id` is the status id as an INTEGER: status ids are int64 (lib/ids.ts refuses larger), so the rowid is
-- exact, FTS5 can walk matches newest first by rowid, and `printf('%020d', id)` is the padded TEXT key of `statuses`.
-- The id never reaches JS as a number.
--
-- `statuses_fts` is an external-content FTS5 index over it: the index is derived data. Backups skip it and its shadow
-- tables (scripts/backup.mjs) and a restore runs `INSERT INTO statuses_fts(statuses_fts) VALUES('rebuild')`.
CREATE TABLE `status_search` (
	`id` integer PRIMARY KEY NOT NULL,
	`text` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE VIRTUAL TABLE `statuses_fts` USING fts5(
	`text`,
	content = 'status_search',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- Existing statuses. Local ones: their source text. Remote ones: their sanitised HTML with the tags cut out by a
-- recursive CTE (line breaks for <br> and paragraph ends, the five entities the sanitiser writes decoded). New
-- writes use the JS extraction, which is the same idea done properly. Measured in workerd: about 70 µs per remote
-- status (FTS included), so a few hundred thousand statuses fit in D1's 30 s limit for one statement. (`END ,`: wrangler's statement splitter only
-- sees the end of a CASE when END is followed by a space.)
INSERT INTO `status_search` (`id`, `text`)
WITH RECURSIVE `strip`(`id`, `rest`, `acc`) AS (
	SELECT `id`,
		replace(replace(replace(replace(`content`, '<br>', char(10)), '<br/>', char(10)), '<br />', char(10)), '</p>', char(10) || char(10)),
		''
	FROM `statuses` WHERE `reblog_of_id` IS NULL AND `local` = 0
	UNION ALL
	SELECT `id`,
		CASE WHEN instr(`rest`, '<') = 0 THEN ''
			ELSE substr(`rest`, instr(`rest`, '<') + coalesce(nullif(instr(substr(`rest`, instr(`rest`, '<')), '>'), 0), length(`rest`)))
		END ,
		`acc` || CASE WHEN instr(`rest`, '<') = 0 THEN `rest` ELSE substr(`rest`, 1, instr(`rest`, '<') - 1) END
	FROM `strip` WHERE `rest` <> ''
),
`body`(`id`, `text`) AS (
	SELECT `id`, trim(replace(replace(replace(replace(replace(`acc`, '&lt;', '<'), '&gt;', '>'), '&quot;', char(34)), '&#39;', char(39)), '&amp;', '&'))
	FROM `strip` WHERE `rest` = ''
	UNION ALL
	SELECT `id`, `text` FROM `statuses` WHERE `reblog_of_id` IS NULL AND `local` = 1
)
SELECT CAST(s.`id` AS INTEGER),
	trim(
		coalesce(s.`spoiler_text`, '') || char(10) || char(10) || b.`text`
		|| coalesce(char(10) || char(10) || (SELECT group_concat(j.`value`, char(10)) FROM `polls` p, json_each(p.`options`) j WHERE p.`id` = s.`poll_id`), '')
		|| coalesce(char(10) || char(10) || (SELECT group_concat(m.`description`, char(10)) FROM `media_attachments` m
			WHERE m.`status_id` = s.`id` AND m.`description` IS NOT NULL AND m.`description` <> ''), ''),
		char(10)
	)
FROM `body` b JOIN `statuses` s ON s.`id` = b.`id`;
--> statement-breakpoint
INSERT INTO `statuses_fts`(`statuses_fts`) VALUES ('rebuild');
--> statement-breakpoint
-- The index follows `status_search` (the usual external-content triggers: a delete must give the indexed text).
CREATE TRIGGER `status_search_after_insert` AFTER INSERT ON `status_search` BEGIN
	INSERT INTO `statuses_fts`(`rowid`, `text`) VALUES (NEW.`id`, NEW.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `status_search_after_delete` AFTER DELETE ON `status_search` BEGIN
	INSERT INTO `statuses_fts`(`statuses_fts`, `rowid`, `text`) VALUES ('delete', OLD.`id`, OLD.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `status_search_after_update` AFTER UPDATE ON `status_search` BEGIN
	INSERT INTO `statuses_fts`(`statuses_fts`, `rowid`, `text`) VALUES ('delete', OLD.`id`, OLD.`text`);
	INSERT INTO `statuses_fts`(`rowid`, `text`) VALUES (NEW.`id`, NEW.`text`);
END;
--> statement-breakpoint
-- A removed status leaves the index in the batch that removes it, whatever removed it (REST delete, Delete received,
-- an account's removal).
CREATE TRIGGER `status_search_status_deleted` AFTER DELETE ON `statuses` BEGIN
	DELETE FROM `status_search` WHERE `id` = CAST(OLD.`id` AS INTEGER);
END;
