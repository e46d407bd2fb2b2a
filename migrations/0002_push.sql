-- Web Push (hand-written; src/db/schema/push.ts is the Drizzle side). One subscription per access token; the
-- triggers drop it when its token is revoked or deleted, as Mastodon ties web_push_subscriptions to the token.
CREATE TABLE `web_push_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`access_token_id` text NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text NOT NULL,
	`endpoint` text NOT NULL,
	`key_p256dh` text NOT NULL,
	`key_auth` text NOT NULL,
	`standard` integer DEFAULT false NOT NULL,
	`alerts` text NOT NULL,
	`policy` text DEFAULT 'all' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `web_push_subscriptions_token` ON `web_push_subscriptions` (`access_token_id`);
--> statement-breakpoint
CREATE INDEX `web_push_subscriptions_account` ON `web_push_subscriptions` (`account_id`);
--> statement-breakpoint
CREATE TABLE `vapid_keys` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`public_key` text NOT NULL,
	`private_key_sealed` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `web_push_subscriptions_token_revoked` AFTER UPDATE OF `revoked_at` ON `oauth_access_tokens`
WHEN NEW.`revoked_at` IS NOT NULL BEGIN
  DELETE FROM `web_push_subscriptions` WHERE `access_token_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `web_push_subscriptions_token_deleted` AFTER DELETE ON `oauth_access_tokens` BEGIN
  DELETE FROM `web_push_subscriptions` WHERE `access_token_id` = OLD.`id`;
END;
