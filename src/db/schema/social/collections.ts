// Collections (Mastodon 4.6): migrations/0050_collections.sql.
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
      itemCount: integer("item_count").notNull().default(0),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("collections_account").on(t.accountId, t.id)],
  ),
);

export type CollectionItemState = "accepted" | "revoked";

export const collectionItems = lazyTable(() =>
  sqliteTable(
    "collection_items",
    {
      id: id("id").primaryKey(),
      collectionId: id("collection_id").notNull(),
      accountId: id("account_id").notNull(),
      state: text("state").$type<CollectionItemState>().notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("collection_items_pair").on(t.collectionId, t.accountId), index("collection_items_account").on(t.accountId, t.collectionId)],
  ),
);

export type CollectionRow = typeof collections.$inferSelect;
export type CollectionItemRow = typeof collectionItems.$inferSelect;
