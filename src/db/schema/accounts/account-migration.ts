// Account migration: migrations/0027_account_migration.sql (src/services/accounts/account-migration.ts). The aliases' URIs are
// also on the account row (`accounts.also_known_as`), as Mastodon keeps them.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

/** A local account's other accounts (Mastodon's AccountAlias): the handle as typed and the actor URI it names. */
export const accountAliases = lazyTable(() =>
  sqliteTable(
    "account_aliases",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      acct: text("acct").notNull(),
      uri: text("uri").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("account_aliases_account_uri").on(t.accountId, t.uri)],
  ),
);

/** A move out of a local account (Mastodon's AccountMigration); the newest within 30 days is the cooldown. */
export const accountMigrations = lazyTable(() =>
  sqliteTable(
    "account_migrations",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      acct: text("acct").notNull(),
      followersCount: integer("followers_count").notNull().default(0),
      targetAccountId: id("target_account_id"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("account_migrations_account").on(t.accountId, t.createdAt)],
  ),
);

export type AccountAliasRow = typeof accountAliases.$inferSelect;
export type AccountMigrationRow = typeof accountMigrations.$inferSelect;
