import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

/** Activities waiting to be delivered: queue messages carry this id, never the body (128 KB message limit). */
export const activityOutbox = lazyTable(() =>
  sqliteTable(
    "activity_outbox",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(), // the signer
      json: text("json").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("activity_outbox_created").on(t.createdAt)],
  ),
);

/**
 * Inbound activities already processed (by id, or sha256 of the body when there is none), by the day (UTC days since
 * the epoch) they were: repeats are no-ops. A WITHOUT ROWID table keyed by (day, activity_id) and nothing else
 * (migrations/0036): one D1 row written per activity; the purge drops whole days (src/federation/inbox/inbox-seen.ts).
 */
export const inboxSeen = lazyTable(() =>
  sqliteTable(
    "inbox_seen",
    {
      day: integer("day").notNull(),
      activityId: text("activity_id").notNull(),
    },
    (t) => [primaryKey({ columns: [t.day, t.activityId] })],
  ),
);

/** URIs of deleted remote objects: a Create arriving after its Delete is ignored (C16). */
export const tombstones = lazyTable(() =>
  sqliteTable("tombstones", {
    uri: text("uri").primaryKey(),
    accountId: id("account_id"),
    createdAt: ms("created_at").notNull(),
  }),
);

/** Days on which deliveries to a host exhausted their retries; 7 distinct days make it unavailable. */
export const deliveryFailures = lazyTable(() =>
  sqliteTable(
    "delivery_failures",
    {
      host: text("host").notNull(),
      day: text("day").notNull(),
    },
    (t) => [primaryKey({ columns: [t.host, t.day] })],
  ),
);

/**
 * Per-host circuit breaker (security §2.9, §3.3 item 6): 10 consecutive salvageable failures open it for 60 s, during
 * which deliveries to the host are re-queued without a request; any success deletes the row.
 */
export const deliveryCircuits = lazyTable(() =>
  sqliteTable("delivery_circuits", {
    host: text("host").primaryKey(),
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    openUntil: ms("open_until"),
  }),
);

export const unavailableDomains = lazyTable(() =>
  sqliteTable("unavailable_domains", {
    domain: text("domain").primaryKey(),
    createdAt: ms("created_at").notNull(),
  }),
);

/** Messages that failed for good, for an admin to look at or replay. */
export const deadLetters = lazyTable(() =>
  sqliteTable("dead_letters", {
    id: id("id").primaryKey(),
    queue: text("queue").notNull(),
    body: text("body").notNull(),
    attempts: integer("attempts").notNull(),
    createdAt: ms("created_at").notNull(),
  }),
);

/**
 * JOBS messages kept in D1: those whose send failed after the write they follow from committed (src/effects/send.ts),
 * and a request's effects written in its write's own batch (src/effects/commit.ts), deleted by the consumer that runs
 * them. The every-minute cron sends again each row whose `sweep_after` has passed (src/effects/pending.ts). WITHOUT
 * ROWID (migrations/0045, 0052).
 */
export const pendingEffects = lazyTable(() =>
  sqliteTable("pending_effects", {
    id: id("id").primaryKey(),
    body: text("body").notNull(),
    delaySeconds: integer("delay_seconds").notNull().default(0),
    createdAt: ms("created_at").notNull(),
    sweepAfter: ms("sweep_after").notNull().default(0),
    /** A row of the journal (src/effects/commit.ts), which the consumer claims and deletes, rather than a kept message. */
    journal: bool("journal").notNull().default(false),
    /** The delivery of its message that runs a journal row, while `sweep_after` is ahead (src/effects/journal.ts). */
    claim: text("claim"),
  }),
);

/**
 * Verified inbound activities waiting for the JOBS consumer (bodies up to 1 MB do not fit a queue message). A WITHOUT
 * ROWID table (migrations/0035): one D1 row written per item stored, not two.
 */
export const inboxItems = lazyTable(() =>
  sqliteTable("inbox_items", {
    id: id("id").primaryKey(),
    signerAccountId: id("signer_account_id").notNull(),
    body: text("body").notNull(),
    receivedAt: ms("received_at").notNull(),
  }),
);
