-- Quote posts (Mastodon 4.5, FEP-044f). One row per quoting status; `state` is Mastodon's Quote state (pending,
-- accepted, rejected, revoked). `approval_uri` is the QuoteAuthorization's id: the remote one for a quote of a remote
-- status; for a quote of a local status it stays NULL and the id is made from the row (`<author>/quote_authorizations/<id>`,
-- src/services/quotes.ts). `activity_uri` is the QuoteRequest's id (ours for a local quote of a remote status, theirs
-- for a remote quote of a local one). `legacy`: a Misskey-style quote (`_misskey_quote`/`quoteUri` without FEP-044f
-- `quote`), shown only once accepted.
CREATE TABLE `quotes` (
  `id` text PRIMARY KEY NOT NULL,
  `status_id` text NOT NULL,
  `account_id` text NOT NULL,
  `quoted_status_id` text,
  `quoted_account_id` text,
  `state` text NOT NULL DEFAULT 'pending',
  `approval_uri` text,
  `activity_uri` text,
  `legacy` integer NOT NULL DEFAULT 0,
  `created_at` integer NOT NULL,
  `updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_status` ON `quotes` (`status_id`);
--> statement-breakpoint
CREATE INDEX `quotes_quoted` ON `quotes` (`quoted_status_id`, `state`, `id`);
--> statement-breakpoint
CREATE INDEX `quotes_approval_uri` ON `quotes` (`approval_uri`);
--> statement-breakpoint
CREATE INDEX `quotes_activity_uri` ON `quotes` (`activity_uri`);
--> statement-breakpoint
-- Mastodon's bitmap: automatic approval in the high 16 bits, manual in the low 16; flags unsupported_policy 1,
-- public 2, followers 4, following 8. Local public/unlisted statuses written before quotes existed allowed anyone.
ALTER TABLE `statuses` ADD `quote_approval_policy` integer NOT NULL DEFAULT 0;
--> statement-breakpoint
ALTER TABLE `statuses` ADD `quotes_count` integer NOT NULL DEFAULT 0;
--> statement-breakpoint
UPDATE `statuses` SET `quote_approval_policy` = 131072 WHERE `local` = 1 AND `reblog_of_id` IS NULL AND `visibility` IN ('public', 'unlisted');
--> statement-breakpoint
-- quotes_count counts accepted quotes (Mastodon's Quote counter caches), kept by triggers like the other counters.
CREATE TRIGGER `quotes_after_insert` AFTER INSERT ON `quotes` WHEN NEW.`state` = 'accepted' BEGIN
  UPDATE `statuses` SET `quotes_count` = `quotes_count` + 1 WHERE `id` = NEW.`quoted_status_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `quotes_after_update` AFTER UPDATE OF `state`, `quoted_status_id` ON `quotes` BEGIN
  UPDATE `statuses` SET `quotes_count` = max(`quotes_count` - 1, 0) WHERE OLD.`state` = 'accepted' AND `id` = OLD.`quoted_status_id`;
  UPDATE `statuses` SET `quotes_count` = `quotes_count` + 1 WHERE NEW.`state` = 'accepted' AND `id` = NEW.`quoted_status_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `quotes_after_delete` AFTER DELETE ON `quotes` WHEN OLD.`state` = 'accepted' BEGIN
  UPDATE `statuses` SET `quotes_count` = max(`quotes_count` - 1, 0) WHERE `id` = OLD.`quoted_status_id`;
END;
--> statement-breakpoint
-- A quoting status that goes takes its quote with it; a quoted status that goes leaves its quotes pointing at nothing
-- (they then show as `deleted`, as Mastodon's nullified quoted_status does).
CREATE TRIGGER `statuses_after_delete_quotes` AFTER DELETE ON `statuses` BEGIN
  DELETE FROM `quotes` WHERE `status_id` = OLD.`id`;
  UPDATE `quotes` SET `quoted_status_id` = NULL WHERE `quoted_status_id` = OLD.`id`;
END;
