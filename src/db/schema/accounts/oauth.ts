import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

export const oauthApplications = lazyTable(() =>
  sqliteTable(
    "oauth_applications",
    {
      id: id("id").primaryKey(),
      name: text("name").notNull(),
      website: text("website"),
      redirectUris: text("redirect_uris").notNull(), // newline-separated
      scopes: text("scopes").notNull(), // space-separated
      clientId: text("client_id").notNull(),
      clientSecret: text("client_secret").notNull(),
      ownerAccountId: id("owner_account_id"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("oauth_applications_client_id").on(t.clientId)],
  ),
);

/** Access tokens are stored as SHA-256 hex of the token; the token itself is only ever shown once. */
export const oauthAccessTokens = lazyTable(() =>
  sqliteTable(
    "oauth_access_tokens",
    {
      id: id("id").primaryKey(),
      tokenHash: text("token_hash").notNull(),
      sealed: text("sealed"), // AES-GCM under SECRET_KEY_BASE, for token reuse (services/tokens.ts)
      applicationId: id("application_id"),
      userId: id("user_id"), // null for client_credentials tokens
      scopes: text("scopes").notNull(),
      grantId: id("grant_id"), // the authorization code it came from
      createdAt: ms("created_at").notNull(),
      revokedAt: ms("revoked_at"),
      lastUsedAt: ms("last_used_at"),
    },
    (t) => [
      uniqueIndex("oauth_access_tokens_hash").on(t.tokenHash),
      index("oauth_access_tokens_app_user").on(t.applicationId, t.userId),
      index("oauth_access_tokens_user").on(t.userId).where(sql`user_id IS NOT NULL`),
      index("oauth_access_tokens_grant").on(t.grantId).where(sql`grant_id IS NOT NULL`),
    ],
  ),
);

/** Authorization codes (single use, 10 minutes), stored hashed. */
export const oauthAccessGrants = lazyTable(() =>
  sqliteTable(
    "oauth_access_grants",
    {
      id: id("id").primaryKey(),
      codeHash: text("code_hash").notNull(),
      applicationId: id("application_id").notNull(),
      userId: id("user_id").notNull(),
      redirectUri: text("redirect_uri").notNull(),
      scopes: text("scopes").notNull(),
      codeChallenge: text("code_challenge"),
      codeChallengeMethod: text("code_challenge_method"),
      expiresAt: ms("expires_at").notNull(),
      usedAt: ms("used_at"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("oauth_access_grants_code").on(t.codeHash)],
  ),
);

/** Browser sessions for the HTML pages (sign-in, authorize, setup). */
export const webSessions = lazyTable(() =>
  sqliteTable("web_sessions", {
    idHash: text("id_hash").primaryKey(),
    userId: id("user_id").notNull(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: ms("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  }),
);
