// Relays (migrations/0026_relays_backfill.sql) and the conversation backfill cooldown.
import { sql } from "drizzle-orm";
import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

export type RelayState = "idle" | "pending" | "accepted" | "rejected";

/** A relay the instance actor follows (Mastodon's Relay): its inbox, the state of the Follow and that Follow's id. */
export const relays = lazyTable(() =>
  sqliteTable(
    "relays",
    {
      id: id("id").primaryKey(),
      inboxUrl: text("inbox_url").notNull(),
      state: text("state").$type<RelayState>().notNull().default("idle"),
      followActivityId: text("follow_activity_id"),
      /** The relay's actor, learnt from its Accept (its Announces are signed by it). */
      actorUri: text("actor_uri"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [
      uniqueIndex("relays_inbox_url").on(t.inboxUrl),
      uniqueIndex("relays_follow_activity_id").on(t.followActivityId).where(sql`${t.followActivityId} IS NOT NULL`),
    ],
  ),
);

/** When a thread's missing ancestors and replies were last fetched (src/federation/remote/backfill.ts). */
export const threadBackfills = lazyTable(() =>
  sqliteTable("thread_backfills", {
    conversationId: id("conversation_id").primaryKey(),
    fetchedAt: ms("fetched_at").notNull(),
  }),
);

export type RelayRow = typeof relays.$inferSelect;
