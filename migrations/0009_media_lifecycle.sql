-- Media lifecycle (hand-written; src/db/schema/statuses.ts is the Drizzle side). `detached_at`: when the status an
-- attachment belonged to was deleted and the attachment kept for a redraft (DELETE /api/v1/statuses/:id without
-- delete_media). Until a new post takes it again it is not served (src/media/serve.ts), and a day later the cron
-- removes it (src/background/housekeeping.ts), as it removes uploads never attached to anything after a day.
ALTER TABLE `media_attachments` ADD `detached_at` integer;
--> statement-breakpoint
-- The cron's scan: unattached rows in the order they became unattached (upload time, or detachment time).
CREATE INDEX `media_unattached` ON `media_attachments` (coalesce(`detached_at`, `created_at`)) WHERE `status_id` IS NULL AND `scheduled_status_id` IS NULL;
