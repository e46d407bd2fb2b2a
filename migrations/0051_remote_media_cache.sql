-- Remote attachments cached in R2 (issue 32 point 3): the prune pass (src/services/remote-media/prune.ts)
-- reads the oldest cached remote files by this index, a bounded batch at a time.
CREATE INDEX `media_remote_cached` ON `media_attachments` (`created_at`) WHERE `file_key` IS NOT NULL AND `remote_url` IS NOT NULL;
