// Cron housekeeping: rows that only matter for a while. Bounded deletes, indexed by time where the table is large.
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";

const DAY = 24 * 60 * 60 * 1000;
/** Longer than any sender's retry window (Mastodon retries for about 3 days), so a late repeat is still a no-op. */
export const INBOX_SEEN_KEEP_MS = 14 * DAY;
/** Deliveries retry for about two days; the stored activity must outlive the last retry. */
export const OUTBOX_KEEP_MS = 4 * DAY;
/** A verified inbound activity whose processing kept failing (the queue gave up on it). */
export const INBOX_ITEM_KEEP_MS = 4 * DAY;
/** Idempotency-Key rows: Mastodon keeps a key for an hour. */
export const IDEMPOTENCY_KEEP_MS = 60 * 60 * 1000;

export async function pruneFederationState(db: DB, at: number): Promise<void> {
  await db.batch([
    db.run(sql`DELETE FROM inbox_seen WHERE received_at < ${at - INBOX_SEEN_KEEP_MS}`),
    db.run(sql`DELETE FROM activity_outbox WHERE created_at < ${at - OUTBOX_KEEP_MS}`),
    db.run(sql`DELETE FROM inbox_items WHERE received_at < ${at - INBOX_ITEM_KEEP_MS}`),
    db.run(sql`DELETE FROM idempotency_keys WHERE created_at < ${at - IDEMPOTENCY_KEEP_MS}`),
  ]);
}
