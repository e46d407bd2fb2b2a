-- Domain blocks with reject_media (Mastodon's DomainBlock#reject_media): `accounts.reject_media` is 1 for a remote
-- account whose domain, or a parent domain, has such a block (as domainBlockFor matches: a block names a host without
-- its port). Tern never downloads remote files; for these accounts the API shows media attachments as Mastodon shows
-- attachments without a file (type "unknown"), and the default avatar and header, without custom emojis
-- (src/entities/media.ts, account.ts, status.ts). Decided when the account is stored (upsertRemoteAccount) and when a
-- block is created, changed or lifted (the `domain_block_apply` effect), so rendering reads nothing more.
ALTER TABLE `accounts` ADD `reject_media` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
UPDATE `accounts` SET `reject_media` = 1
WHERE `domain` IS NOT NULL AND EXISTS (SELECT 1 FROM `domain_blocks` b WHERE b.`reject_media` = 1 AND (
  (CASE WHEN instr(`accounts`.`domain`, ':') > 0 THEN rtrim(rtrim(lower(`accounts`.`domain`), '0123456789'), ':') ELSE lower(`accounts`.`domain`) END) = b.`domain`
  OR substr(CASE WHEN instr(`accounts`.`domain`, ':') > 0 THEN rtrim(rtrim(lower(`accounts`.`domain`), '0123456789'), ':') ELSE lower(`accounts`.`domain`) END,
    -length(b.`domain`) - 1) = '.' || b.`domain`));
