-- The hourly sweep of archive imports left behind (src/services/data/import-archive-sweep.ts): uploads never completed
-- and failed imports never resumed, by age. Rows finished or still running are not in it.
CREATE INDEX `archive_imports_left` ON `archive_imports` (`created_at`) WHERE `state` IN ('uploading', 'failed') AND `phase` <> 'done';
