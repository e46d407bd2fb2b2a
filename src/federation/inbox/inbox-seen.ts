// Which inbound activities were already processed: `inbox_seen` (migrations/0036, 0059), one row per activity id (or
// the body's SHA-256 when it has none), keyed by (day, activity_id) and nothing else, so marking one seen is one D1 row
// written. `day` is the first day of the week the activity was seen in (days since the epoch, a multiple of 7): the
// purge drops whole weeks, a range of the key, and the check probes the key once per week kept, 4 probes (D1 counts a
// row read for each, found or not: one per day kept was 16 rows read for every incoming activity).
import { type Placeholder, type SQL, sql } from "drizzle-orm";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The days one `day` value of inbox_seen stands for. */
export const SEEN_BUCKET_DAYS = 7;

/** Longer than any sender's retry window (Mastodon retries for about 3 days), so a late repeat is still a no-op. */
export const SEEN_KEEP_DAYS = 14;

/** The `day` an activity seen at `at` is kept under: the first day of its week (UTC days since the epoch). */
export const seenBucket = (at: number) => {
  const day = Math.floor(at / DAY_MS);
  return day - (day % SEEN_BUCKET_DAYS);
};

/** The oldest bucket kept at `at`, the one holding the day SEEN_KEEP_DAYS ago: the purge deletes the buckets before it. */
export const firstKeptBucket = (at: number) => seenBucket(at - SEEN_KEEP_DAYS * DAY_MS);

/** Buckets probed from the first kept: those up to tomorrow's (another isolate's clock may be a little ahead). */
const PROBES = Math.ceil((SEEN_KEEP_DAYS + 1) / SEEN_BUCKET_DAYS) + 1;

/**
 * Whether `key` (an SQL expression) was seen: an equality probe of the key for each bucket kept, from `first`
 * (firstKeptBucket, bound) to tomorrow's.
 */
export function seenCondition(key: SQL, first: SQL | Placeholder): SQL {
  const days = Array.from({ length: PROBES }, (_, k) => (k ? sql`${first} + ${sql.raw(String(k * SEEN_BUCKET_DAYS))}` : sql`${first}`));
  return sql`EXISTS (SELECT 1 FROM inbox_seen WHERE day IN (${sql.join(days, sql`, `)}) AND activity_id = ${key})`;
}

/** Marks `key` seen (placeholders `key` and `day`: seenBucket). */
export const markSeenSql = () => sql`INSERT OR IGNORE INTO inbox_seen (day, activity_id) VALUES (${sql.placeholder("day")}, ${sql.placeholder("key")})`;

/** Deletes the buckets no longer kept at `at`. */
export const purgeSeenSql = (at: number) => sql`DELETE FROM inbox_seen WHERE day < ${firstKeptBucket(at)}`;
