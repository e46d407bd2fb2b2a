-- The cron's trends refresh (src/trends/refresh.ts) reads the boosts of the last day or two: the status trends count
-- them as uses, the link trends as shares of the boosted status's card. Scanning the primary key's id range read every
-- status of the window, boosts or not; this index holds the boosts only (a fifth of the statuses on the bench's day),
-- ordered by id, with the boosted status's id, so the range reads boosts and nothing else.
CREATE INDEX `statuses_boosts` ON `statuses` (`id`, `reblog_of_id`) WHERE reblog_of_id IS NOT NULL;
