// Collections (Mastodon 4.6): migrations/0050_collections.sql.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

export const collections = lazyTable(() =>
  sqliteTable(
    "collections",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      name: text("name").notNull(),
      description: text("description").notNull().default(""),
      language: text("language"),
      sensitive: bool("sensitive").notNull().default(false),
      discoverable: bool("discoverable").notNull().default(true),
      tagId: id("tag_id"),
      /** A remote collection's id (null for a local one) and its page (a local one's: /collections/:id) (migrations/0056). */
      uri: text("uri"),
      url: text("url"),
      itemCount: integer("item_count").notNull().default(0),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [
      index("collections_account").on(t.accountId, t.id),
      uniqueIndex("collections_uri").on(t.uri).where(sql`uri IS NOT NULL`),
      index("collections_url").on(t.url).where(sql`url IS NOT NULL`),
    ],
  ),
);

/** accepted (shown), pending (a remote account not yet asked or answered), rejected (it said no), revoked (it withdrew). */
export type CollectionItemState = "accepted" | "pending" | "rejected" | "revoked";

export const collectionItems = lazyTable(() =>
  sqliteTable(
    "collection_items",
    {
      id: id("id").primaryKey(),
      collectionId: id("collection_id").notNull(),
      accountId: id("account_id").notNull(),
      state: text("state").$type<CollectionItemState>().notNull(),
      createdAt: ms("created_at").notNull(),
      /** A remote collection's FeaturedItem id (migrations/0056). */
      uri: text("uri"),
      /** The FeatureRequest that asked: ours (a local collection, a remote account) or theirs (a remote collection, a local account). */
      activityUri: text("activity_uri"),
      /** A remote account's FeatureAuthorization of this item of a local collection. */
      approvalUri: text("approval_uri"),
    },
    (t) => [
      uniqueIndex("collection_items_pair").on(t.collectionId, t.accountId),
      index("collection_items_account").on(t.accountId, t.collectionId),
      index("collection_items_activity").on(t.activityUri).where(sql`activity_uri IS NOT NULL`),
      index("collection_items_approval").on(t.approvalUri).where(sql`approval_uri IS NOT NULL`),
    ],
  ),
);

export type CollectionRow = typeof collections.$inferSelect;
export type CollectionItemRow = typeof collectionItems.$inferSelect;
