-- Poll votes federate (Mastodon's DistributePollUpdateWorker): after votes on a local poll, one Update{Question} with
-- the new counts goes to the voters' servers and the author's followers a few minutes later, however many votes
-- arrived meanwhile. `update_queued_at` is when that Update was queued; NULL when none is pending (src/services/polls.ts).
ALTER TABLE `polls` ADD `update_queued_at` integer;
