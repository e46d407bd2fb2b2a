-- Collections federated (FEP-7aa9, as Mastodon 4.6 runs it: FeaturedCollection, FeaturedItem, FeatureRequest,
-- FeatureAuthorization). A collection of a remote account is kept here with its `uri` (its id) and `url` (its page);
-- a local one has no `uri`. An item of a local collection that features a remote account waits (`pending`) until that
-- account's server answers our FeatureRequest (`activity_uri`, ours) with an Accept naming its FeatureAuthorization
-- (`approval_uri`), or a Reject (`rejected`). An item of a remote collection has its FeaturedItem id (`uri`), and,
-- when it features a local account, the FeatureRequest that asked (`activity_uri`, theirs).
ALTER TABLE `collections` ADD `uri` text;
--> statement-breakpoint
ALTER TABLE `collections` ADD `url` text;
--> statement-breakpoint
CREATE UNIQUE INDEX `collections_uri` ON `collections` (`uri`) WHERE `uri` IS NOT NULL;
--> statement-breakpoint
-- By page address: a status linking to a collection's `url` shows it (`tagged_collections`). A local collection's url
-- is its page here, written when it is made or changed.
CREATE INDEX `collections_url` ON `collections` (`url`) WHERE `url` IS NOT NULL;
--> statement-breakpoint
ALTER TABLE `collection_items` ADD `uri` text;
--> statement-breakpoint
ALTER TABLE `collection_items` ADD `activity_uri` text;
--> statement-breakpoint
ALTER TABLE `collection_items` ADD `approval_uri` text;
--> statement-breakpoint
CREATE INDEX `collection_items_activity` ON `collection_items` (`activity_uri`) WHERE `activity_uri` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `collection_items_approval` ON `collection_items` (`approval_uri`) WHERE `approval_uri` IS NOT NULL;
--> statement-breakpoint
-- A remote account's consent to be featured (its actor's interactionPolicy.canFeature) as JSON
-- `{"automatic": [...], "manual": [...]}`; NULL when its actor gives none (it cannot be featured: Mastodon's `missing`).
-- `featured_collections_url`: its actor's `featuredCollections`.
ALTER TABLE `accounts` ADD `feature_policy` text;
--> statement-breakpoint
ALTER TABLE `accounts` ADD `featured_collections_url` text;
--> statement-breakpoint
-- The collection an `added_to_collection` or `collection_update` notification is about; by it, when the collection
-- goes (a partial index: other notifications add nothing to it).
ALTER TABLE `notifications` ADD `collection_id` text;
--> statement-breakpoint
CREATE INDEX `notifications_collection` ON `notifications` (`collection_id`) WHERE `collection_id` IS NOT NULL;
