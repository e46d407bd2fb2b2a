-- Direct-message conversations as each participant sees them (Mastodon's account_conversations; hand-written,
-- src/db/schema/statuses.ts is the Drizzle side). One row per local account, thread (statuses.conversation_id) and
-- set of other participants. Written by the fan-out of a direct status (src/timelines/fanout.ts), fixed up when a
-- status goes (src/services/delete-status.ts). The API id is the integer row id; pages are keyed by last_status_id.
CREATE TABLE `account_conversations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	-- JSON array of the other participants' account ids, sorted (empty: a note to oneself)
	`participant_ids` text NOT NULL,
	`last_status_id` text NOT NULL,
	`unread` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_conversations_key` ON `account_conversations` (`account_id`, `conversation_id`, `participant_ids`);
--> statement-breakpoint
CREATE INDEX `account_conversations_page` ON `account_conversations` (`account_id`, `last_status_id`);
--> statement-breakpoint
CREATE INDEX `account_conversations_last` ON `account_conversations` (`last_status_id`);
