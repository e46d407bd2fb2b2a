-- What the instance documents count, kept like the per-account counters (0001_counters.sql): by triggers, in the
-- statement that changes them, so a post or a sign-up needs no extra statement in code and a redelivered INSERT OR
-- IGNORE counts nothing twice. `generation` takes a new random value on every change to what the documents show
-- besides these counts (settings, rules, local custom emojis, domain blocks, the contact account and its role):
-- src/lib/instance-cache.ts reloads those parts only when it moved. Active users are counted when the cache refreshes,
-- through the two indexes below (rows read = active users, not all users).
CREATE TABLE `instance_stats` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`generation` text NOT NULL,
	`user_count` integer DEFAULT 0 NOT NULL,
	`status_count` integer DEFAULT 0 NOT NULL,
	`domain_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO `instance_stats` (`id`, `generation`, `user_count`, `status_count`, `domain_count`) VALUES (1, hex(randomblob(8)),
	(SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL),
	(SELECT count(*) FROM `statuses` WHERE `local` = 1 AND `reblog_of_id` IS NULL),
	(SELECT count(*) FROM (SELECT `domain` FROM `instances` UNION SELECT `domain` FROM `accounts` WHERE `domain` IS NOT NULL)));
--> statement-breakpoint
CREATE INDEX `users_last_active_at` ON `users` (`last_active_at`);
--> statement-breakpoint
CREATE INDEX `users_current_sign_in_at` ON `users` (`current_sign_in_at`);
--> statement-breakpoint
-- Local posts (reblogs are not posts), Mastodon's status_count / NodeInfo localPosts.
CREATE TRIGGER `instance_stats_status_insert` AFTER INSERT ON `statuses` WHEN NEW.`local` = 1 AND NEW.`reblog_of_id` IS NULL BEGIN
	UPDATE `instance_stats` SET `status_count` = `status_count` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_status_delete` AFTER DELETE ON `statuses` WHEN OLD.`local` = 1 AND OLD.`reblog_of_id` IS NULL BEGIN
	UPDATE `instance_stats` SET `status_count` = max(`status_count` - 1, 0) WHERE `id` = 1;
END;
--> statement-breakpoint
-- Users that count (approved, account not suspended): recounted on the rare changes, over local users only.
CREATE TRIGGER `instance_stats_user_insert` AFTER INSERT ON `users` BEGIN
	UPDATE `instance_stats` SET `user_count` = (SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_user_delete` AFTER DELETE ON `users` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)),
		`user_count` = (SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_user_update` AFTER UPDATE OF `approved`, `disabled`, `role_id` ON `users` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)),
		`user_count` = (SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_local_account_suspend` AFTER UPDATE OF `suspended_at` ON `accounts`
	WHEN NEW.`domain` IS NULL AND (OLD.`suspended_at` IS NULL) <> (NEW.`suspended_at` IS NULL) BEGIN
	UPDATE `instance_stats` SET `user_count` = (SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_local_account_delete` AFTER DELETE ON `accounts` WHEN OLD.`domain` IS NULL BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)),
		`user_count` = (SELECT count(*) FROM `users` u JOIN `accounts` a ON a.`id` = u.`account_id` WHERE u.`approved` = 1 AND a.`suspended_at` IS NULL) WHERE `id` = 1;
END;
--> statement-breakpoint
-- Known domains: the instances table plus every remote account's domain (v1 stats.domain_count, like listPeers).
CREATE TRIGGER `instance_stats_domain_account_insert` AFTER INSERT ON `accounts` WHEN NEW.`domain` IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM `instances` WHERE `domain` = NEW.`domain`)
	AND NOT EXISTS (SELECT 1 FROM `accounts` WHERE `domain` = NEW.`domain` AND `id` <> NEW.`id`) BEGIN
	UPDATE `instance_stats` SET `domain_count` = `domain_count` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_account_delete` AFTER DELETE ON `accounts` WHEN OLD.`domain` IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM `instances` WHERE `domain` = OLD.`domain`)
	AND NOT EXISTS (SELECT 1 FROM `accounts` WHERE `domain` = OLD.`domain`) BEGIN
	UPDATE `instance_stats` SET `domain_count` = max(`domain_count` - 1, 0) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_instance_insert` AFTER INSERT ON `instances`
	WHEN NOT EXISTS (SELECT 1 FROM `accounts` WHERE `domain` = NEW.`domain`) BEGIN
	UPDATE `instance_stats` SET `domain_count` = `domain_count` + 1 WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_instance_delete` AFTER DELETE ON `instances`
	WHEN NOT EXISTS (SELECT 1 FROM `accounts` WHERE `domain` = OLD.`domain`) BEGIN
	UPDATE `instance_stats` SET `domain_count` = max(`domain_count` - 1, 0) WHERE `id` = 1;
END;
--> statement-breakpoint
-- The contact account (a local owner or admin) as rendered: its profile and counters, and its role.
CREATE TRIGGER `instance_stats_contact_update` AFTER UPDATE ON `accounts` WHEN NEW.`domain` IS NULL
	AND EXISTS (SELECT 1 FROM `users` WHERE `account_id` = NEW.`id` AND `role_id` IN ('00000000000000000002', '00000000000000000003')) BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_role_update` AFTER UPDATE ON `user_roles` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_setting_insert` AFTER INSERT ON `instance_settings` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_setting_update` AFTER UPDATE ON `instance_settings` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_setting_delete` AFTER DELETE ON `instance_settings` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_rule_insert` AFTER INSERT ON `rules` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_rule_update` AFTER UPDATE ON `rules` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_rule_delete` AFTER DELETE ON `rules` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_emoji_insert` AFTER INSERT ON `custom_emojis` WHEN NEW.`domain` IS NULL BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_emoji_update` AFTER UPDATE ON `custom_emojis` WHEN OLD.`domain` IS NULL OR NEW.`domain` IS NULL BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_emoji_delete` AFTER DELETE ON `custom_emojis` WHEN OLD.`domain` IS NULL BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_block_insert` AFTER INSERT ON `domain_blocks` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_block_update` AFTER UPDATE ON `domain_blocks` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
--> statement-breakpoint
CREATE TRIGGER `instance_stats_domain_block_delete` AFTER DELETE ON `domain_blocks` BEGIN
	UPDATE `instance_stats` SET `generation` = hex(randomblob(8)) WHERE `id` = 1;
END;
