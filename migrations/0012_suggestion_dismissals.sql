-- Follow suggestions a user dismissed (Mastodon's follow_recommendation_mutes; src/db/schema/social.ts).
CREATE TABLE `suggestion_dismissals` (
	`account_id` text NOT NULL,
	`target_account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `target_account_id`)
);
