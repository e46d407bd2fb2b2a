// Mastodon's new_trends notice (Trends.request_review!, every 2 hours): while trends need review (trendable_by_default
// off), staff who may manage trends and want these mails are told what started trending without a review since the
// last notice. What was already announced is kept in instance_settings (`trends.review_notified`, the keys of the items
// awaiting review at the last run), so an item is announced once however long it waits; one that left the trends and
// comes back is announced again.
import { sql } from "drizzle-orm";
import { type DB, runBatch } from "../db/client";
import { settingStatement } from "../db/setting-statement";
import type { Effects } from "../effects/collector";
import { trendableByDefault, urlHost } from "./refresh";

const NOTIFIED_KEY = "trends.review_notified";
/** The notice goes out on even UTC hours (the cron's hourly tasks run at minute 2): every 2 hours, as Mastodon's. */
export const isTrendsNoticeHour = (at: number) => new Date(at).getUTCHours() % 2 === 0;

/** The keys (t:, s:, l: and the id) of trend rows held back for want of a review. */
export async function awaitingReview(db: DB): Promise<string[]> {
  const rows = await db.all<{ k: string }>(sql`SELECT 't:' || tt.tag_id AS k FROM tag_trends tt JOIN tags t ON t.id = tt.tag_id
      WHERE tt.allowed = 0 AND t.reviewed_at IS NULL AND t.usable = 1
    UNION ALL SELECT 's:' || st.status_id FROM status_trends st
      WHERE st.allowed = 0 AND NOT EXISTS (SELECT 1 FROM status_trend_reviews r WHERE r.status_id = st.status_id)
    UNION ALL SELECT 'l:' || pt.preview_card_id FROM preview_card_trends pt JOIN preview_cards pc ON pc.id = pt.preview_card_id
      WHERE pt.allowed = 0 AND pc.trendable IS NULL
        AND NOT EXISTS (SELECT 1 FROM preview_card_providers p WHERE p.domain = ${urlHost(sql`pc.url`)} AND p.trendable IS NOT NULL)`);
  return rows.map((r) => r.k);
}

/**
 * Records the notice (a `mail_staff` effect) when new items await review; returns how many are new. The cron runs it
 * itself once its tasks are done (`afterResponse`: one mail binding call, no queue message), the queue taking it when
 * it fails.
 */
export async function noticeTrendsAwaitingReview(db: DB, fx: Effects): Promise<number> {
  if (await trendableByDefault(db)) return 0;
  const [awaiting, stored] = await Promise.all([
    awaitingReview(db),
    db.all<{ value: string }>(sql`SELECT value FROM instance_settings WHERE key = ${NOTIFIED_KEY}`),
  ]);
  let notified: string[] = [];
  try {
    notified = JSON.parse(stored[0]?.value ?? "[]") as string[];
  } catch {
    notified = [];
  }
  const before = new Set(notified);
  const fresh = awaiting.filter((k) => !before.has(k));
  // Written only when the list changed: every two hours the same list would be a row written for nothing.
  const next = JSON.stringify(awaiting);
  if (next !== (stored[0]?.value ?? "[]")) await runBatch(db, [settingStatement(db, NOTIFIED_KEY, next)]);
  if (!fresh.length) return 0;
  const count = (p: string) => fresh.filter((k) => k.startsWith(p)).length;
  fx.afterResponse({ type: "mail_staff", origin: fx.origin, notice: { kind: "trends", tags: count("t:"), statuses: count("s:"), links: count("l:") } });
  return fresh.length;
}
