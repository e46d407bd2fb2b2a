-- Mastodon 4.6: a report may name collections of the reported account (`collection_ids[]`), as it names statuses.
ALTER TABLE `reports` ADD `collection_ids` text NOT NULL DEFAULT '[]';
