-- Remote statuses by their web URL. A link pasted into search names a status by its `url` (a Mastodon status's page,
-- https://host/@name/123) as often as by its `uri`, and with no index on `url` each such search scanned every status.
-- As Mastodon's index_statuses_on_url, only where the url says something the uri does not (`url <> uri`); and only
-- remote statuses, as a local status's URL is read for its id (src/queries/search.ts). One D1 row written per such
-- status.
CREATE INDEX `statuses_url` ON `statuses` (`url`) WHERE url IS NOT NULL AND url <> uri AND local = 0;
