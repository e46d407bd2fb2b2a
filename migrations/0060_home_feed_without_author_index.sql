-- home_feed_author (account, author) served one statement: an unfollow, mute or block taking the author's entries out
-- of the feed (src/timelines/feed-merge.ts). It cost a D1 row written with every home-feed entry, the most frequent
-- write there is, for a rare statement that can walk the feed's own key instead: a feed keeps its newest 800 entries
-- (MAX_FEED_ITEMS), so that delete reads at most ~800 rows, once per unfollow. Dropping an index writes no rows.
DROP INDEX IF EXISTS `home_feed_author`;
