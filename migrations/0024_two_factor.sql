-- Two-factor sign-in (TOTP, RFC 6238) and recovery codes for the account settings pages (src/services/two-factor.ts).
-- `user_two_factor`: one row per user who started or finished the setup. `otp_secret` is the base32 secret sealed with
-- AES-GCM under SECRET_KEY_BASE (a D1 dump alone cannot compute codes); `enabled_at` is NULL while the setup waits for
-- its confirming code; `consumed_timestep` is the last time step accepted, so a code is never accepted twice
-- (devise-two-factor's consumed_timestep).
-- `otp_backup_codes`: the recovery codes, each an HMAC-SHA-256 under SECRET_KEY_BASE, deleted when used (single use).
-- `web_sign_in_challenges`: the sign-in page's second step (password accepted, code awaited): the cookie holds a
-- random id, D1 only its SHA-256, the step's own CSRF token and where to go afterwards; 5 minutes, 5 codes at most.
CREATE TABLE `user_two_factor` (
  `user_id` text PRIMARY KEY NOT NULL,
  `otp_secret` text NOT NULL,
  `enabled_at` integer,
  `consumed_timestep` integer,
  `created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `otp_backup_codes` (
  `user_id` text NOT NULL,
  `code_hash` text NOT NULL,
  PRIMARY KEY (`user_id`, `code_hash`)
);
--> statement-breakpoint
CREATE TABLE `web_sign_in_challenges` (
  `id_hash` text PRIMARY KEY NOT NULL,
  `user_id` text NOT NULL,
  `csrf_token` text NOT NULL,
  `return_to` text NOT NULL,
  `attempts` integer NOT NULL DEFAULT 0,
  `expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `web_sign_in_challenges_user` ON `web_sign_in_challenges` (`user_id`);
