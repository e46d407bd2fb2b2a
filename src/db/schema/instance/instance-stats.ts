import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";

/**
 * One row (id 1) of what the instance documents count, kept by triggers (migrations/0021_instance_stats.sql), and
 * `generation`: a new random value whenever anything else those documents show changed (src/services/instance/instance-cache.ts).
 */
export const instanceStats = lazyTable(() =>
  sqliteTable("instance_stats", {
    id: integer("id").primaryKey(),
    generation: text("generation").notNull(),
    userCount: integer("user_count").notNull().default(0),
    statusCount: integer("status_count").notNull().default(0),
    domainCount: integer("domain_count").notNull().default(0),
  }),
);
