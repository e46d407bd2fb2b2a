-- Annual reports (Mastodon's Wrapstodon, GeneratedAnnualReport): one row per account and year. While `state` is
-- 'generating', `cursor` is the last status id the background rounds have counted and `progress` their running
-- totals (src/services/accounts/annual-report-rounds.ts); once 'available', `data` is the report as the API serves it
-- and `progress` is NULL. `viewed_at` is set by POST /api/v1/annual_reports/:year/read (the index lists unread ones).
-- Keyed by (account, year) without a rowid: every read names both, and the account's deletion removes its rows.
CREATE TABLE `annual_reports` (
  `account_id` text NOT NULL,
  `year` integer NOT NULL,
  `state` text NOT NULL,
  `cursor` text,
  `progress` text,
  `data` text,
  `schema_version` integer NOT NULL,
  `viewed_at` integer,
  `created_at` integer NOT NULL,
  `updated_at` integer NOT NULL,
  PRIMARY KEY (`account_id`, `year`)
) WITHOUT ROWID;
