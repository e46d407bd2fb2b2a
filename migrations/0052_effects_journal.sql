-- A request's effects are written in its write's own batch (src/effects/commit.ts), so an invocation that dies between
-- the commit and the queue send loses none: the consumer that runs them deletes the row, and the every-minute cron
-- sends again each row still here once `sweep_after` has passed (src/effects/pending.ts). Rows kept after a failed
-- send (0045) have 0: sent at the next run.
ALTER TABLE `pending_effects` ADD `sweep_after` integer NOT NULL DEFAULT 0;
