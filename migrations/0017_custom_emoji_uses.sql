-- Custom emojis on statuses and accounts (Mastodon's CustomEmoji.from_text, rendered as `emojis`).
-- `statuses.emoji_shortcodes`: the `:shortcode:`s written in a status's text and content warning (a JSON array, NULL
-- when none), so one statement of the status bundle finds their emojis (of the author's domain, or local ones).
-- `accounts.emojis`: the emojis an account's name, note and fields use, resolved when the profile is written (a JSON
-- array of {shortcode, image_key, image_remote_url, visible_in_picker}), so rendering an account needs no query.
ALTER TABLE `statuses` ADD `emoji_shortcodes` text;
ALTER TABLE `accounts` ADD `emojis` text;
