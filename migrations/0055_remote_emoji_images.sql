-- Remote custom emojis cached in R2 (issue 32 point 3; src/services/remote-media/emojis.ts). NULL: the emoji's image
-- is to be fetched (a new emoji, or one whose image URL changed); otherwise when that was queued. The five-minute cron
-- reads the due ones by this index.
ALTER TABLE `custom_emojis` ADD `image_cached_at` integer;
CREATE INDEX `custom_emojis_due` ON `custom_emojis` (`id`)
  WHERE `domain` IS NOT NULL AND `image_cached_at` IS NULL AND `image_remote_url` IS NOT NULL;
