-- Discoverable accounts, newest first: the profile directory's `order=new` (open to anyone) walks this instead of
-- every account, most of which (remote ones above all) are not discoverable. Partial: an entry only for a
-- discoverable account, written when one is stored or turns discoverable, not when a profile is refreshed.
CREATE INDEX `accounts_discoverable` ON `accounts` (`id`) WHERE discoverable = 1;
