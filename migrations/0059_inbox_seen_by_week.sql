-- inbox_seen's `day` becomes the first day of the week an activity was seen in (a multiple of 7 days since the
-- epoch), so the seen check probes 4 keys, one per week kept, where it probed 16, one per day: D1 counts a row read
-- for each probe, found or not (src/federation/inbox/inbox-seen.ts). The rows already kept move to their week's day.
INSERT OR IGNORE INTO `inbox_seen` (`day`, `activity_id`) SELECT `day` - (`day` % 7), `activity_id` FROM `inbox_seen` WHERE `day` % 7 <> 0;
DELETE FROM `inbox_seen` WHERE `day` % 7 <> 0;
