-- Expression indexes drizzle-kit cannot write, and the counter triggers: a trigger runs in the same statement as the
-- row change, and INSERT OR IGNORE of a duplicate fires nothing, so a redelivered activity cannot count twice.
CREATE UNIQUE INDEX `accounts_username_domain` ON `accounts` (lower(`username`), coalesce(`domain`, ''));
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email` ON `users` (lower(`email`));
--> statement-breakpoint
CREATE TRIGGER `statuses_after_insert` AFTER INSERT ON `statuses` BEGIN
  UPDATE `accounts` SET `statuses_count` = `statuses_count` + 1,
    `last_status_at` = max(coalesce(`last_status_at`, 0), NEW.`created_at`)
    WHERE `id` = NEW.`account_id`;
  UPDATE `statuses` SET `reblogs_count` = `reblogs_count` + 1 WHERE NEW.`reblog_of_id` IS NOT NULL AND `id` = NEW.`reblog_of_id`;
  UPDATE `statuses` SET `replies_count` = `replies_count` + 1
    WHERE NEW.`in_reply_to_id` IS NOT NULL AND NEW.`visibility` <> 'direct' AND `id` = NEW.`in_reply_to_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `statuses_after_delete` AFTER DELETE ON `statuses` BEGIN
  UPDATE `accounts` SET `statuses_count` = max(`statuses_count` - 1, 0) WHERE `id` = OLD.`account_id`;
  UPDATE `statuses` SET `reblogs_count` = max(`reblogs_count` - 1, 0) WHERE OLD.`reblog_of_id` IS NOT NULL AND `id` = OLD.`reblog_of_id`;
  UPDATE `statuses` SET `replies_count` = max(`replies_count` - 1, 0)
    WHERE OLD.`in_reply_to_id` IS NOT NULL AND OLD.`visibility` <> 'direct' AND `id` = OLD.`in_reply_to_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `favourites_after_insert` AFTER INSERT ON `favourites` BEGIN
  UPDATE `statuses` SET `favourites_count` = `favourites_count` + 1 WHERE `id` = NEW.`status_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `favourites_after_delete` AFTER DELETE ON `favourites` BEGIN
  UPDATE `statuses` SET `favourites_count` = max(`favourites_count` - 1, 0) WHERE `id` = OLD.`status_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `follows_after_insert` AFTER INSERT ON `follows` BEGIN
  UPDATE `accounts` SET `following_count` = `following_count` + 1 WHERE `id` = NEW.`account_id`;
  UPDATE `accounts` SET `followers_count` = `followers_count` + 1 WHERE `id` = NEW.`target_account_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `follows_after_delete` AFTER DELETE ON `follows` BEGIN
  UPDATE `accounts` SET `following_count` = max(`following_count` - 1, 0) WHERE `id` = OLD.`account_id`;
  UPDATE `accounts` SET `followers_count` = max(`followers_count` - 1, 0) WHERE `id` = OLD.`target_account_id`;
END;
--> statement-breakpoint
-- Seed roles as Mastodon has them: Owner, Admin, Moderator (permissions are lib/permissions.ts flags).
INSERT INTO `user_roles` (`id`, `name`, `color`, `permissions`, `position`, `highlighted`, `created_at`, `updated_at`) VALUES
  ('00000000000000000003', 'Owner', '', 1, 1000, 1, 0, 0),
  ('00000000000000000002', 'Admin', '', 1, 100, 1, 0, 0),
  ('00000000000000000001', 'Moderator', '', 1564, 10, 1, 0, 0);
