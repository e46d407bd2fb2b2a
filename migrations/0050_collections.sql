-- Collections (Mastodon 4.6): curated lists of accounts a user recommends. `item_count` counts the items shown to others
-- (accepted ones), kept by the batch that changes them. A collection is local only: Tern neither sends nor reads
-- FeaturedCollection activities, so every item is accepted when added (as Mastodon 4.6 did for local accounts).
-- `tag_id`: the one hashtag that describes it (tags, by normalised name).
CREATE TABLE `collections` (
  `id` text PRIMARY KEY NOT NULL,
  `account_id` text NOT NULL,
  `name` text NOT NULL,
  `description` text NOT NULL DEFAULT '',
  `language` text,
  `sensitive` integer NOT NULL DEFAULT 0,
  `discoverable` integer NOT NULL DEFAULT 1,
  `tag_id` text,
  `item_count` integer NOT NULL DEFAULT 0,
  `created_at` integer NOT NULL,
  `updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `collections_account` ON `collections` (`account_id`, `id`);
--> statement-breakpoint
-- One row per account in a collection; `state`: accepted, or revoked by the featured account (kept so that the owner
-- cannot add them again). Read by collection (the item list) and by account (the collections an account is in).
CREATE TABLE `collection_items` (
  `id` text PRIMARY KEY NOT NULL,
  `collection_id` text NOT NULL,
  `account_id` text NOT NULL,
  `state` text NOT NULL,
  `created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `collection_items_pair` ON `collection_items` (`collection_id`, `account_id`);
--> statement-breakpoint
CREATE INDEX `collection_items_account` ON `collection_items` (`account_id`, `collection_id`);
