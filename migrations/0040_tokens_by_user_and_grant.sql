-- Access tokens by user and by grant. Tokens are never deleted when revoked (a revoked token must keep answering 401,
-- and the authorized-apps page and the admin's sign-up sources read them), and clients register an app and take a
-- token at every sign-in, so the table grows for the life of the instance: revoking every token at a password change,
-- listing authorized apps, an account's deletion and a reused authorization code each scanned all of it. Partial:
-- client_credentials tokens have no user, and only tokens from an authorization code have a grant (no entry, no D1
-- row written, for the others).
CREATE INDEX `oauth_access_tokens_user` ON `oauth_access_tokens` (`user_id`) WHERE user_id IS NOT NULL;
CREATE INDEX `oauth_access_tokens_grant` ON `oauth_access_tokens` (`grant_id`) WHERE grant_id IS NOT NULL;
