-- An account's attachments by status instead of by attachment id. The media tab of a profile (statuses with
-- only_media) walked the account's statuses newest first to find the few with media: rows read in proportion to its
-- statuses without any. It now walks this index (src/queries/accounts.ts). It replaces `media_account`
-- (account_id, id), whose other uses (an account's media deleted, the archive's newest media) it serves as well, so
-- an attachment still costs one index entry here.
DROP INDEX IF EXISTS `media_account`;
CREATE INDEX `media_account_status` ON `media_attachments` (`account_id`, `status_id`);
