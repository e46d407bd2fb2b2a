CREATE TABLE `account_keys` (
	`account_id` text PRIMARY KEY NOT NULL,
	`private_key_pem` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`domain` text,
	`display_name` text DEFAULT '' NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`note_source` text DEFAULT '' NOT NULL,
	`fields` text DEFAULT '[]' NOT NULL,
	`avatar_key` text,
	`avatar_remote_url` text,
	`header_key` text,
	`header_remote_url` text,
	`actor_type` text DEFAULT 'Person' NOT NULL,
	`locked` integer DEFAULT false NOT NULL,
	`discoverable` integer,
	`indexable` integer DEFAULT false NOT NULL,
	`hide_collections` integer,
	`memorial` integer DEFAULT false NOT NULL,
	`uri` text NOT NULL,
	`url` text,
	`inbox_url` text,
	`shared_inbox_url` text,
	`outbox_url` text,
	`followers_url` text,
	`following_url` text,
	`featured_url` text,
	`featured_tags_url` text,
	`public_key_pem` text,
	`public_key_id` text,
	`statuses_count` integer DEFAULT 0 NOT NULL,
	`followers_count` integer DEFAULT 0 NOT NULL,
	`following_count` integer DEFAULT 0 NOT NULL,
	`last_status_at` integer,
	`suspended_at` integer,
	`suspension_origin` text,
	`silenced_at` integer,
	`moved_to_account_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`fetched_at` integer,
	`featured_fetched_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_uri` ON `accounts` (`uri`);--> statement-breakpoint
CREATE INDEX `accounts_domain` ON `accounts` (`domain`);--> statement-breakpoint
CREATE INDEX `accounts_public_key_id` ON `accounts` (`public_key_id`);--> statement-breakpoint
CREATE TABLE `user_roles` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`color` text DEFAULT '' NOT NULL,
	`permissions` integer DEFAULT 0 NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`highlighted` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`confirmed_at` integer,
	`confirmation_token` text,
	`approved` integer DEFAULT true NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`role_id` text,
	`locale` text,
	`reason` text,
	`settings` text DEFAULT '{}' NOT NULL,
	`chosen_languages` text,
	`sign_up_ip` text,
	`current_sign_in_at` integer,
	`last_active_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_account` ON `users` (`account_id`);--> statement-breakpoint
CREATE TABLE `oauth_access_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`application_id` text NOT NULL,
	`user_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`code_challenge` text,
	`code_challenge_method` text,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_access_grants_code` ON `oauth_access_grants` (`code_hash`);--> statement-breakpoint
CREATE TABLE `oauth_access_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`sealed` text,
	`application_id` text,
	`user_id` text,
	`scopes` text NOT NULL,
	`grant_id` text,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	`last_used_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_access_tokens_hash` ON `oauth_access_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `oauth_access_tokens_app_user` ON `oauth_access_tokens` (`application_id`,`user_id`);--> statement-breakpoint
CREATE TABLE `oauth_applications` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`website` text,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret` text NOT NULL,
	`owner_account_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_applications_client_id` ON `oauth_applications` (`client_id`);--> statement-breakpoint
CREATE TABLE `web_sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`csrf_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_uri` ON `conversations` (`uri`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `media_attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text,
	`scheduled_status_id` text,
	`type` text NOT NULL,
	`file_key` text,
	`content_type` text,
	`file_size` integer,
	`remote_url` text,
	`preview_key` text,
	`preview_remote_url` text,
	`description` text,
	`focus_x_milli` integer,
	`focus_y_milli` integer,
	`meta` text,
	`blurhash` text,
	`processing` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `media_status` ON `media_attachments` (`status_id`);--> statement-breakpoint
CREATE INDEX `media_account` ON `media_attachments` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `mentions` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text NOT NULL,
	`account_id` text NOT NULL,
	`silent` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mentions_status_account` ON `mentions` (`status_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `mentions_account` ON `mentions` (`account_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `poll_votes` (
	`id` text PRIMARY KEY NOT NULL,
	`poll_id` text NOT NULL,
	`account_id` text NOT NULL,
	`choice` integer NOT NULL,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `poll_votes_unique` ON `poll_votes` (`poll_id`,`account_id`,`choice`);--> statement-breakpoint
CREATE TABLE `polls` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text,
	`account_id` text NOT NULL,
	`options` text NOT NULL,
	`votes_per_option` text NOT NULL,
	`multiple` integer DEFAULT false NOT NULL,
	`hide_totals` integer DEFAULT false NOT NULL,
	`votes_count` integer DEFAULT 0 NOT NULL,
	`voters_count` integer DEFAULT 0 NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `polls_expires` ON `polls` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `status_edits` (
	`id` text PRIMARY KEY NOT NULL,
	`status_id` text NOT NULL,
	`account_id` text NOT NULL,
	`text` text NOT NULL,
	`content` text NOT NULL,
	`spoiler_text` text DEFAULT '' NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`media_ids` text,
	`poll_options` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `status_edits_status` ON `status_edits` (`status_id`,`id`);--> statement-breakpoint
CREATE TABLE `status_tags` (
	`status_id` text NOT NULL,
	`tag_id` text NOT NULL,
	PRIMARY KEY(`status_id`, `tag_id`)
);
--> statement-breakpoint
CREATE INDEX `status_tags_tag` ON `status_tags` (`tag_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`uri` text NOT NULL,
	`url` text,
	`account_id` text NOT NULL,
	`local` integer NOT NULL,
	`in_reply_to_id` text,
	`in_reply_to_account_id` text,
	`reblog_of_id` text,
	`conversation_id` text,
	`text` text DEFAULT '' NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`spoiler_text` text DEFAULT '' NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`visibility` text NOT NULL,
	`language` text,
	`application_id` text,
	`poll_id` text,
	`media_ids` text,
	`replies_count` integer DEFAULT 0 NOT NULL,
	`reblogs_count` integer DEFAULT 0 NOT NULL,
	`favourites_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`edited_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statuses_uri` ON `statuses` (`uri`);--> statement-breakpoint
CREATE INDEX `statuses_account_id` ON `statuses` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `statuses_reblog_of` ON `statuses` (`reblog_of_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `statuses_in_reply_to` ON `statuses` (`in_reply_to_id`);--> statement-breakpoint
CREATE INDEX `statuses_conversation` ON `statuses` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `statuses_public` ON `statuses` (`visibility`,`local`,`id`);--> statement-breakpoint
CREATE TABLE `tags` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`display_name` text NOT NULL,
	`usable` integer DEFAULT true NOT NULL,
	`trendable` integer DEFAULT true NOT NULL,
	`last_status_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_name` ON `tags` (`name`);--> statement-breakpoint
CREATE TABLE `account_domain_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_domain_blocks_pair` ON `account_domain_blocks` (`account_id`,`domain`);--> statement-breakpoint
CREATE TABLE `account_notes` (
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`comment` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `target_account_id`)
);
--> statement-breakpoint
CREATE TABLE `account_pins` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_pins_pair` ON `account_pins` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE TABLE `blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `blocks_pair` ON `blocks` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `blocks_target` ON `blocks` (`target_account_id`);--> statement-breakpoint
CREATE TABLE `bookmarks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bookmarks_pair` ON `bookmarks` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `bookmarks_account` ON `bookmarks` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `conversation_mutes` (
	`account_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	PRIMARY KEY(`account_id`, `conversation_id`)
);
--> statement-breakpoint
CREATE TABLE `favourites` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `favourites_pair` ON `favourites` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `favourites_status` ON `favourites` (`status_id`,`id`);--> statement-breakpoint
CREATE INDEX `favourites_account` ON `favourites` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `featured_tags` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`tag_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `featured_tags_pair` ON `featured_tags` (`account_id`,`tag_id`);--> statement-breakpoint
CREATE TABLE `follow_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	`languages` text,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follow_requests_pair` ON `follow_requests` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follow_requests_target` ON `follow_requests` (`target_account_id`,`id`);--> statement-breakpoint
CREATE TABLE `follows` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	`languages` text,
	`uri` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_pair` ON `follows` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follows_target` ON `follows` (`target_account_id`,`id`);--> statement-breakpoint
CREATE TABLE `list_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`list_id` text NOT NULL,
	`account_id` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `list_accounts_pair` ON `list_accounts` (`list_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `list_accounts_account` ON `list_accounts` (`account_id`);--> statement-breakpoint
CREATE TABLE `lists` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`replies_policy` text DEFAULT 'list' NOT NULL,
	`exclusive` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `lists_account` ON `lists` (`account_id`);--> statement-breakpoint
CREATE TABLE `markers` (
	`account_id` text NOT NULL,
	`timeline` text NOT NULL,
	`last_read_id` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `timeline`)
);
--> statement-breakpoint
CREATE TABLE `mutes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`hide_notifications` integer DEFAULT true NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mutes_pair` ON `mutes` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `mutes_expires` ON `mutes` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE TABLE `status_pins` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `status_pins_pair` ON `status_pins` (`account_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `tag_follows` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`tag_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tag_follows_pair` ON `tag_follows` (`account_id`,`tag_id`);--> statement-breakpoint
CREATE INDEX `tag_follows_tag` ON `tag_follows` (`tag_id`);--> statement-breakpoint
CREATE TABLE `feed_states` (
	`account_id` text PRIMARY KEY NOT NULL,
	`dropped_at` integer,
	`regenerated_at` integer
);
--> statement-breakpoint
CREATE TABLE `home_feed` (
	`account_id` text NOT NULL,
	`status_id` text NOT NULL,
	`reblog_of_id` text,
	`author_id` text NOT NULL,
	PRIMARY KEY(`account_id`, `status_id`)
);
--> statement-breakpoint
CREATE INDEX `home_feed_author` ON `home_feed` (`account_id`,`author_id`);--> statement-breakpoint
CREATE INDEX `home_feed_status` ON `home_feed` (`status_id`);--> statement-breakpoint
CREATE INDEX `home_feed_reblog` ON `home_feed` (`reblog_of_id`,`account_id`) WHERE reblog_of_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `list_feed` (
	`list_id` text NOT NULL,
	`status_id` text NOT NULL,
	`reblog_of_id` text,
	`author_id` text NOT NULL,
	PRIMARY KEY(`list_id`, `status_id`)
);
--> statement-breakpoint
CREATE INDEX `list_feed_status` ON `list_feed` (`status_id`);--> statement-breakpoint
CREATE INDEX `list_feed_reblog` ON `list_feed` (`reblog_of_id`,`list_id`) WHERE reblog_of_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`from_account_id` text NOT NULL,
	`type` text NOT NULL,
	`status_id` text,
	`report_id` text,
	`activity_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notifications_account` ON `notifications` (`account_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_activity` ON `notifications` (`account_id`,`type`,`activity_id`);--> statement-breakpoint
CREATE INDEX `notifications_status` ON `notifications` (`status_id`);--> statement-breakpoint
CREATE TABLE `admin_action_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `custom_emojis` (
	`id` text PRIMARY KEY NOT NULL,
	`shortcode` text NOT NULL,
	`domain` text,
	`image_key` text,
	`image_remote_url` text,
	`uri` text,
	`visible_in_picker` integer DEFAULT true NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`category` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_emojis_shortcode_domain` ON `custom_emojis` (`shortcode`,`domain`);--> statement-breakpoint
CREATE TABLE `domain_allows` (
	`id` text PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_allows_domain` ON `domain_allows` (`domain`);--> statement-breakpoint
CREATE TABLE `domain_blocks` (
	`id` text PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`severity` text DEFAULT 'silence' NOT NULL,
	`reject_media` integer DEFAULT false NOT NULL,
	`reject_reports` integer DEFAULT false NOT NULL,
	`private_comment` text,
	`public_comment` text,
	`obfuscate` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_blocks_domain` ON `domain_blocks` (`domain`);--> statement-breakpoint
CREATE TABLE `instance_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `instances` (
	`domain` text PRIMARY KEY NOT NULL,
	`first_seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`status_ids` text NOT NULL,
	`rule_ids` text NOT NULL,
	`comment` text DEFAULT '' NOT NULL,
	`category` text DEFAULT 'other' NOT NULL,
	`forward` integer DEFAULT false NOT NULL,
	`action_taken_at` integer,
	`assigned_account_id` text,
	`uri` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `reports_target` ON `reports` (`target_account_id`);--> statement-breakpoint
CREATE TABLE `rules` (
	`id` text PRIMARY KEY NOT NULL,
	`text` text NOT NULL,
	`hint` text DEFAULT '' NOT NULL,
	`priority` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `activity_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`json` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `activity_outbox_created` ON `activity_outbox` (`created_at`);--> statement-breakpoint
CREATE TABLE `dead_letters` (
	`id` text PRIMARY KEY NOT NULL,
	`queue` text NOT NULL,
	`body` text NOT NULL,
	`attempts` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `delivery_circuits` (
	`host` text PRIMARY KEY NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`open_until` integer
);
--> statement-breakpoint
CREATE TABLE `delivery_failures` (
	`host` text NOT NULL,
	`day` text NOT NULL,
	PRIMARY KEY(`host`, `day`)
);
--> statement-breakpoint
CREATE TABLE `inbox_items` (
	`id` text PRIMARY KEY NOT NULL,
	`signer_account_id` text NOT NULL,
	`body` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `inbox_seen` (
	`activity_id` text PRIMARY KEY NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `inbox_seen_received` ON `inbox_seen` (`received_at`);--> statement-breakpoint
CREATE TABLE `tombstones` (
	`uri` text PRIMARY KEY NOT NULL,
	`account_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `unavailable_domains` (
	`domain` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
