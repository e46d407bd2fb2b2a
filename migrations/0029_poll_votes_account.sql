-- Status search (src/queries/search.ts) drives the viewer's library from the viewer's own sets, each an index range:
-- the polls an account voted in had none (poll_votes_unique starts with poll_id), so finding them scanned the table.
CREATE INDEX `poll_votes_account` ON `poll_votes` (`account_id`, `poll_id`);
