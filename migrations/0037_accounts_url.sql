-- Accounts by their profile URL. A Note's Mention tags and a pasted profile link name an account by its `url` as
-- often as by its `uri`, and with no index on `url` every such lookup scanned the remote accounts: an incoming Create
-- read ~600 rows on the bench's day (one per remote account it knew) to find its mentions, a third of the day's rows
-- read. Partial, as Mastodon's index_accounts_on_url: accounts without a url have no entry (no D1 row written).
CREATE INDEX `accounts_url` ON `accounts` (`url`) WHERE url IS NOT NULL;
