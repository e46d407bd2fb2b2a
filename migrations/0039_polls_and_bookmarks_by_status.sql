-- Polls and bookmarks by their status. Deleting a status removes its poll and the bookmarks of it, an incoming Update
-- reads the status's poll, and a vote finds the poll of a status: with no index on `status_id` each of these scanned
-- every poll or every bookmark. Both tables are written rarely (a poll per status that has one; a bookmark per local
-- action), so the entries cost little in rows written.
CREATE INDEX `polls_status` ON `polls` (`status_id`) WHERE status_id IS NOT NULL;
CREATE INDEX `bookmarks_status` ON `bookmarks` (`status_id`);
