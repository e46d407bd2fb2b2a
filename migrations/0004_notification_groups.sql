-- Grouped notifications, the notification policy and notification requests (hand-written; the Drizzle side is
-- src/db/schema/notifications.ts). Mastodon 4.3's notifications.group_key and .filtered, notification_policies,
-- notification_requests and notification_permissions.
--
-- group_key is written by the INSERT that creates the notification (src/services/notifications.ts); it is NULL for
-- types that never group and for filtered notifications. `filtered` = 1: held back by the recipient's policy (a
-- notification request), hidden from the lists unless asked for.
ALTER TABLE `notifications` ADD `group_key` text;
--> statement-breakpoint
ALTER TABLE `notifications` ADD `filtered` integer DEFAULT false NOT NULL;
--> statement-breakpoint
-- A group's members (newest first), the newest group of a kind when a notification is created, a group by key.
CREATE INDEX `notifications_group` ON `notifications` (`account_id`, `group_key`, `id`) WHERE group_key IS NOT NULL;
--> statement-breakpoint
-- A sender's filtered notifications (accepting or dismissing a request touches only these).
CREATE INDEX `notifications_filtered_from` ON `notifications` (`account_id`, `from_account_id`, `id`) WHERE filtered = 1;
--> statement-breakpoint
-- One row per account that changed its policy; no row = Mastodon's defaults (accept, accept, accept, filter, filter).
CREATE TABLE `notification_policies` (
	`account_id` text PRIMARY KEY NOT NULL,
	`for_not_following` text DEFAULT 'accept' NOT NULL,
	`for_not_followers` text DEFAULT 'accept' NOT NULL,
	`for_new_accounts` text DEFAULT 'accept' NOT NULL,
	`for_private_mentions` text DEFAULT 'filter' NOT NULL,
	`for_limited_accounts` text DEFAULT 'filter' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- A sender whose filtered mentions wait for the recipient's decision. Kept by the triggers below, so the statement
-- that creates a notification stays one statement: the request's id is its first filtered mention's id.
CREATE TABLE `notification_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`from_account_id` text NOT NULL,
	`last_status_id` text,
	`notifications_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_requests_pair` ON `notification_requests` (`account_id`, `from_account_id`);
--> statement-breakpoint
CREATE INDEX `notification_requests_account` ON `notification_requests` (`account_id`, `id`);
--> statement-breakpoint
-- An accepted request: this sender's notifications are never filtered again for this recipient.
CREATE TABLE `notification_permissions` (
	`account_id` text NOT NULL,
	`from_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `from_account_id`)
);
--> statement-breakpoint
-- Mastodon's NotifyService#update_notification_request!: a filtered mention opens (or refreshes) its sender's request.
CREATE TRIGGER `notification_requests_on_insert` AFTER INSERT ON `notifications`
WHEN NEW.filtered = 1 AND NEW.type = 'mention'
BEGIN
	INSERT OR IGNORE INTO notification_requests (id, account_id, from_account_id, last_status_id, notifications_count, created_at, updated_at)
	VALUES (NEW.id, NEW.account_id, NEW.from_account_id, NEW.status_id, 0, NEW.created_at, NEW.created_at);
	UPDATE notification_requests SET notifications_count = notifications_count + 1, last_status_id = NEW.status_id, updated_at = NEW.created_at
	WHERE account_id = NEW.account_id AND from_account_id = NEW.from_account_id;
END;
--> statement-breakpoint
-- Mastodon's NotificationRequest#reconsider_existence!: a filtered mention that goes away (dismissed, its status
-- deleted) or is let through (accepted) leaves the count, and a request with nothing left is removed.
CREATE TRIGGER `notification_requests_on_delete` AFTER DELETE ON `notifications`
WHEN OLD.filtered = 1 AND OLD.type = 'mention'
BEGIN
	UPDATE notification_requests SET notifications_count = notifications_count - 1
	WHERE account_id = OLD.account_id AND from_account_id = OLD.from_account_id;
	DELETE FROM notification_requests WHERE account_id = OLD.account_id AND from_account_id = OLD.from_account_id AND notifications_count <= 0;
END;
--> statement-breakpoint
CREATE TRIGGER `notification_requests_on_unfilter` AFTER UPDATE OF `filtered` ON `notifications`
WHEN OLD.filtered = 1 AND NEW.filtered = 0 AND OLD.type = 'mention'
BEGIN
	UPDATE notification_requests SET notifications_count = notifications_count - 1
	WHERE account_id = OLD.account_id AND from_account_id = OLD.from_account_id;
	DELETE FROM notification_requests WHERE account_id = OLD.account_id AND from_account_id = OLD.from_account_id AND notifications_count <= 0;
END;
