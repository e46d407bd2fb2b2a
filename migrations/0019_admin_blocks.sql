-- Admin access blocks (Mastodon's canonical_email_blocks, email_domain_blocks, ip_blocks). Domain blocks and allows
-- already exist (0000); their enforcement reads these tables at sign-up and sign-in (src/services/admin-*.ts).

-- SHA-256 hex of the canonical e-mail (lower case, dots and +tag removed from the local part).
CREATE TABLE `canonical_email_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`canonical_email_hash` text NOT NULL,
	`reference_account_id` text,
	`created_at` integer NOT NULL
);
CREATE UNIQUE INDEX `canonical_email_blocks_hash` ON `canonical_email_blocks` (`canonical_email_hash`);

-- A blocked e-mail domain also blocks its subdomains.
CREATE TABLE `email_domain_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL
);
CREATE UNIQUE INDEX `email_domain_blocks_domain` ON `email_domain_blocks` (`domain`);

-- `ip` is the masked network in CIDR form as Mastodon serialises it ("192.0.2.0/24", "2001:db8::/32").
CREATE TABLE `ip_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`ip` text NOT NULL,
	`severity` text NOT NULL,
	`comment` text DEFAULT '' NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
CREATE UNIQUE INDEX `ip_blocks_ip` ON `ip_blocks` (`ip`);
