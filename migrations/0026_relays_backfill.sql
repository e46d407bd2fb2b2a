-- Relays (Mastodon's relays table, app/models/relay.rb): an inbox this server follows with the instance actor
-- (Follow of as:Public); while `accepted`, local public statuses are delivered to it and its Announces are taken.
-- state: idle | pending | accepted | rejected. follow_activity_id: the id of the Follow in flight or accepted.
CREATE TABLE `relays` (
  `id` text PRIMARY KEY NOT NULL,
  `inbox_url` text NOT NULL,
  `state` text DEFAULT 'idle' NOT NULL,
  `follow_activity_id` text,
  `actor_uri` text,
  `created_at` integer NOT NULL,
  `updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `relays_inbox_url` ON `relays` (`inbox_url`);
--> statement-breakpoint
CREATE UNIQUE INDEX `relays_follow_activity_id` ON `relays` (`follow_activity_id`) WHERE `follow_activity_id` IS NOT NULL;
--> statement-breakpoint
-- Conversation backfill (src/federation/backfill.ts): when a thread's missing ancestors and replies were last
-- fetched, keyed by the thread (the conversation of the status whose context was opened). A thread is fetched again
-- only after the cooldown.
CREATE TABLE `thread_backfills` (
  `conversation_id` text PRIMARY KEY NOT NULL,
  `fetched_at` integer NOT NULL
);
--> statement-breakpoint
-- A reply stored before its parent was known is linked to it later (backfill): the parent's replies_count follows
-- the link like it follows an insert (0001_counters.sql).
CREATE TRIGGER `statuses_reply_linked` AFTER UPDATE OF `in_reply_to_id` ON `statuses`
  WHEN OLD.`in_reply_to_id` IS NOT NEW.`in_reply_to_id` BEGIN
  UPDATE `statuses` SET `replies_count` = max(`replies_count` - 1, 0)
    WHERE OLD.`in_reply_to_id` IS NOT NULL AND OLD.`visibility` <> 'direct' AND `id` = OLD.`in_reply_to_id`;
  UPDATE `statuses` SET `replies_count` = `replies_count` + 1
    WHERE NEW.`in_reply_to_id` IS NOT NULL AND NEW.`visibility` <> 'direct' AND `id` = NEW.`in_reply_to_id`;
END;
