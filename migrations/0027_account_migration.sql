-- Account migration (Mastodon's AccountAlias, AccountMigration and Account#also_known_as; src/services/account-migration.ts).
-- `account_aliases`: a local account's other accounts ("moving from another account"): the handle as typed and the
-- actor URI it resolved to, one row per (account, uri). The URIs are also kept on the account row as
-- `accounts.also_known_as` (a JSON array, written in the same batch), so the actor document needs no join; for remote
-- accounts that column holds the actor's own `alsoKnownAs`, refreshed whenever the actor is fetched.
-- `account_migrations`: each move out of a local account (the handle, the target, the follower count then); the newest
-- row within 30 days is Mastodon's cooldown. `accounts.moved_to_account_id` exists since 0000.
CREATE TABLE `account_aliases` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `acct` text NOT NULL,
  `uri` text NOT NULL,
  `created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_aliases_account_uri` ON `account_aliases` (`account_id`, `uri`);
--> statement-breakpoint
CREATE TABLE `account_migrations` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `acct` text NOT NULL,
  `followers_count` integer NOT NULL DEFAULT 0,
  `target_account_id` text,
  `created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `account_migrations_account` ON `account_migrations` (`account_id`, `created_at`);
--> statement-breakpoint
ALTER TABLE `accounts` ADD `also_known_as` text;
--> statement-breakpoint
CREATE INDEX `accounts_moved_to` ON `accounts` (`moved_to_account_id`) WHERE `moved_to_account_id` IS NOT NULL;
