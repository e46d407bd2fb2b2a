-- The instance's own custom emojis by shortcode. Remote emojis are stored too (one row per shortcode and server seen
-- in a status or profile), so the table grows with federation, and the list clients load at startup (GET
-- /api/v1/custom_emojis, read again whenever the instance documents' cache is cold) and the admin list walked every
-- emoji in shortcode order to keep the local ones. Partial: a remote emoji has no entry here (no D1 row written).
CREATE INDEX `custom_emojis_local` ON `custom_emojis` (`shortcode`) WHERE domain IS NULL;
