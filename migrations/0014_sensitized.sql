-- Staff "mark media as sensitive" (Mastodon's accounts.sensitized_at): every status of the account with media is shown
-- sensitive while it is set (src/entities/status.ts), and the admin API reports and filters it.
ALTER TABLE `accounts` ADD `sensitized_at` integer;
