// Which inbound activities were already processed: `inbox_seen` (migrations/0036), one row per activity id (or the
// body's SHA-256 when it has none), keyed by (day, activity_id) and nothing else, so marking one seen is one D1 row
// written. The purge drops whole days, a range of the key; the check probes the key once per day kept.
import { type Placeholder, type SQL, sql } from "drizzle-orm";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Longer than any sender's retry window (Mastodon retries for about 3 days), so a late repeat is still a no-op. */
export const SEEN_KEEP_DAYS = 14;

/** UTC days since the epoch. */
export const seenDay = (at: number) => Math.floor(at / DAY_MS);

/** The oldest day kept at `at`: the purge deletes the days before it. */
export const firstKeptDay = (at: number) => seenDay(at) - SEEN_KEEP_DAYS;

/**
 * Whether `key` (an SQL expression) was seen: an equality probe of the key for each day kept, from `first`
 * (firstKeptDay, bound) to tomorrow (another isolate's clock may be a little ahead at midnight).
 */
export function seenCondition(key: SQL, first: SQL | Placeholder): SQL {
  const days = Array.from({ length: SEEN_KEEP_DAYS + 2 }, (_, k) => (k ? sql`${first} + ${sql.raw(String(k))}` : sql`${first}`));
  return sql`EXISTS (SELECT 1 FROM inbox_seen WHERE day IN (${sql.join(days, sql`, `)}) AND activity_id = ${key})`;
}

/** Marks `key` seen today (placeholders `key` and `day`: seenDay). */
export const markSeenSql = () => sql`INSERT OR IGNORE INTO inbox_seen (day, activity_id) VALUES (${sql.placeholder("day")}, ${sql.placeholder("key")})`;

/** Deletes the days no longer kept at `at`. */
export const purgeSeenSql = (at: number) => sql`DELETE FROM inbox_seen WHERE day < ${firstKeptDay(at)}`;
