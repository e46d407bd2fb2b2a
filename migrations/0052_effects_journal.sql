-- A request's effects are written in its write's own batch (src/effects/commit.ts), so an invocation that dies between
-- the commit and the queue send loses none. `journal` marks those rows (kept rows of a failed send, 0045, have 0). The
-- consumer that runs a journal row's message claims the row first (`claim`: which delivery of it runs it, until
-- `sweep_after`), then deletes it; the every-minute cron sends again each row whose `sweep_after` has passed: a journal
-- row no consumer claimed within its grace, or whose claimer died (src/effects/journal.ts, src/effects/pending.ts).
ALTER TABLE `pending_effects` ADD `sweep_after` integer NOT NULL DEFAULT 0;
ALTER TABLE `pending_effects` ADD `journal` integer NOT NULL DEFAULT 0;
ALTER TABLE `pending_effects` ADD `claim` text;
