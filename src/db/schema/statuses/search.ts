import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";

/**
 * The searchable text of each status (migrations/0018_status_search.sql), written by services/statuses/search-index.ts. `id` is
 * the status id as an INTEGER (int64): read it in SQL as `printf('%020d', id)`, never as a JS number. The FTS5 index
 * over it, `statuses_fts`, and its triggers exist only in the migration (drizzle has no virtual tables).
 */
export const statusSearch = lazyTable(() =>
  sqliteTable("status_search", {
    id: integer("id").primaryKey(),
    text: text("text").notNull().default(""),
  }),
);
