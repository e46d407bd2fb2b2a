-- E-mail through Cloudflare Email Service (src/mail/, src/services/accounts/email-links.ts): the single-use links a mail
-- carries (sign-up confirmation, a new address's confirmation, password reset), as Devise's confirmation_token and
-- reset_password_token. Only the SHA-256 of a link's token is stored; the mail job gets the token sealed under
-- SECRET_KEY_BASE in its queue message, never from D1. A new link of one purpose replaces the user's older one.
CREATE TABLE `email_links` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`purpose` text NOT NULL,
	`token_hash` text NOT NULL,
	`email` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_links_token_hash` ON `email_links` (`token_hash`);
--> statement-breakpoint
CREATE INDEX `email_links_user` ON `email_links` (`user_id`, `purpose`);
--> statement-breakpoint
CREATE INDEX `email_links_expires_at` ON `email_links` (`expires_at`);
--> statement-breakpoint
-- Devise's reconfirmable: a new address waits here until its link is followed; `email` keeps signing in meanwhile.
ALTER TABLE `users` ADD `unconfirmed_email` text;
