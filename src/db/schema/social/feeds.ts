import { sql } from "drizzle-orm";
import { index, primaryKey, sqliteTable } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

/**
 * Materialised home feeds (Mastodon keeps them in Redis; here they are rows). One row per entry: status_id is the
 * entry (a reblog's own id for boosts), reblog_of_id lets a second boost of the same status be skipped.
 */
// A WITHOUT ROWID table (migrations/0034): keyed by (account, status), one D1 row written less per entry.
export const homeFeed = lazyTable(() =>
  sqliteTable(
    "home_feed",
    {
      accountId: id("account_id").notNull(),
      statusId: id("status_id").notNull(),
      reblogOfId: id("reblog_of_id"),
      authorId: id("author_id").notNull(),
    },
    (t) => [
      primaryKey({ columns: [t.accountId, t.statusId] }),
      // No (account, author) index (dropped in migrations/0060): an unfollow's delete walks the feed's key, ≤ 800 rows.
      // Deleting a status removes its entries from every feed (unfanout) without walking the author's followers.
      index("home_feed_status").on(t.statusId),
      // Reblog entries only: "is this status already boosted into this feed", and removal with the original.
      index("home_feed_reblog").on(t.reblogOfId, t.accountId).where(sql`reblog_of_id IS NOT NULL`),
    ],
  ),
);

export const listFeed = lazyTable(() =>
  sqliteTable(
    "list_feed",
    {
      listId: id("list_id").notNull(),
      statusId: id("status_id").notNull(),
      reblogOfId: id("reblog_of_id"),
      authorId: id("author_id").notNull(),
    },
    (t) => [
      primaryKey({ columns: [t.listId, t.statusId] }),
      index("list_feed_status").on(t.statusId),
      index("list_feed_reblog").on(t.reblogOfId, t.listId).where(sql`reblog_of_id IS NOT NULL`),
    ],
  ),
);

/** Feed state per account: when a feed was dropped for inactivity, and when it was last rebuilt. */
export const feedStates = lazyTable(() =>
  sqliteTable("feed_states", {
    accountId: id("account_id").primaryKey(),
    droppedAt: ms("dropped_at"),
    regeneratedAt: ms("regenerated_at"),
  }),
);
