-- Scheduled statuses (hand-written; src/db/schema/scheduled.ts is the Drizzle side). Mastodon's scheduled_statuses,
-- plus what publishing from a cron needs: the scheduling request's application and origin, a claim (claimed_at,
-- claims) so overlapping cron runs take a row once, and a permanent failure kept with its reason (failed_at, error).
-- Media attached to a scheduled status point at it through media_attachments.scheduled_status_id (0000_init).
CREATE TABLE `scheduled_statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`application_id` text,
	`scheduled_at` integer NOT NULL,
	`params` text NOT NULL,
	`origin` text DEFAULT '' NOT NULL,
	`idempotency_key` text,
	`claimed_at` integer,
	`claims` integer DEFAULT 0 NOT NULL,
	`failed_at` integer,
	`error` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scheduled_statuses_due` ON `scheduled_statuses` (`scheduled_at`);
--> statement-breakpoint
CREATE INDEX `scheduled_statuses_account` ON `scheduled_statuses` (`account_id`, `id`);
