-- Remote avatars and headers cached in R2 (issue 32 point 3; src/services/remote-media/pictures.ts). NULL: the
-- account's pictures are to be fetched (a new account, or one whose avatar or header URL changed); otherwise when the
-- last fetch was queued. The five-minute cron reads the first kind by the first index, and the prune the cached ones
-- oldest first by the second.
ALTER TABLE `accounts` ADD `pictures_cached_at` integer;
CREATE INDEX `accounts_pictures_due` ON `accounts` (`id`)
  WHERE `domain` IS NOT NULL AND `pictures_cached_at` IS NULL AND (`avatar_remote_url` IS NOT NULL OR `header_remote_url` IS NOT NULL);
CREATE INDEX `accounts_pictures_cached` ON `accounts` (`pictures_cached_at`)
  WHERE `domain` IS NOT NULL AND (`avatar_key` IS NOT NULL OR `header_key` IS NOT NULL);
