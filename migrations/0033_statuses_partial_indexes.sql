-- Two indexes of `statuses` hold only the rows they are asked about. Every query of statuses_in_reply_to asks for the
-- replies to some status (`in_reply_to_id = ?`, `IN`, a join), and every query of statuses_conversation for the
-- statuses of some conversation, so SQLite uses them as before (a comparison on a column implies it IS NOT NULL); but
-- most statuses are not replies, and boosts have no conversation, and each of their NULL entries was a D1 row written
-- with the status and read by nothing. One row written less per status that is not a reply, one more per boost.
DROP INDEX `statuses_in_reply_to`;
CREATE INDEX `statuses_in_reply_to` ON `statuses` (`in_reply_to_id`) WHERE in_reply_to_id IS NOT NULL;
DROP INDEX `statuses_conversation`;
CREATE INDEX `statuses_conversation` ON `statuses` (`conversation_id`) WHERE conversation_id IS NOT NULL;
