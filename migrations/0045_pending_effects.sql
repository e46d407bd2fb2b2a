-- Effects whose queue send failed after their write committed (src/effects/send.ts): kept here until the every-minute
-- cron sends them again (src/effects/pending.ts). Empty while the queue works, so it costs nothing then. WITHOUT ROWID:
-- one D1 row written per message kept.
CREATE TABLE `pending_effects` (
  `id` text PRIMARY KEY NOT NULL,
  `body` text NOT NULL,
  `delay_seconds` integer NOT NULL DEFAULT 0,
  `created_at` integer NOT NULL
) WITHOUT ROWID;
-- A push subscription whose pushes keep failing (network errors, timeouts, 5xx): when the first failure of the current
-- run happened. Any delivered push clears it; one still failing three days later is deleted (src/push/deliver.ts).
ALTER TABLE `web_push_subscriptions` ADD `failing_since` integer;
