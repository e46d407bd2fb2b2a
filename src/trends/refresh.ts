// Trends, computed by the cron every 5th minute (Mastodon's Scheduler::Trends::RefreshScheduler runs every 5 minutes)
// from what D1 already holds, local and remote alike, into three small tables the API reads with one query each
// (src/queries/instance/trends.ts). Mastodon counts uses in Redis as they happen (Trends::History); Tern counts the same
// things from the statuses of the last two UTC days instead, so nothing extra is written on the posting path.
//
// Formulas and thresholds are Mastodon's (app/models/trends/{tags,statuses,links}.rb, main):
//   score = observed < threshold || expected > observed ? 0 : (observed − expected)² / expected
// - tags:     observed/expected = distinct accounts using the tag in public, non-boost statuses today/yesterday
//             (UTC days; authors not silenced or suspended; tag usable); expected 0 counts as 1. The peak score
//             (max_score) decays with a 4 h half-life for a 2-day cooldown; listed while the decayed score ≥ 1.
// - statuses: observed = reblogs + favourites, expected = 1; public, not a reply, no content warning, not
//             sensitive, author discoverable, not silenced/suspended and not sensitized by staff; score × ½^(age / 1 h);
//             listed while ≥ 0.3.
// - links:    observed/expected = distinct accounts sharing the card today/yesterday (a public status or public
//             boost of one, no CW, not sensitive, neither author silenced/suspended); only article cards with a
//             title, description, image and provider name (PreviewCard#appropriate_for_trends?). Threshold 15
//             distinct accounts (the spec's Limits table; Mastodon's default is 5), 8 h half-life, 2-day cooldown,
//             listed while ≥ 1.
// Review follows Mastodon's setting "Allow trends without prior review" (`trendable_by_default` in instance_settings,
// off by default as in Mastodon's config/settings.yml; the admin settings page writes it). Off: an item trends publicly
// only once staff approved it (/api/v1/admin/trends, src/services/admin/trends.ts); on: it trends until staff reject it.
// A tag must be usable and, reviewed, trendable; a status's author must be discoverable (the eligibility rule) and its
// review, if any, approving; a link's own review wins over its publisher's. Mastodon also drops items whose language is not a known locale; Tern keeps items
// without a language and only orders by the reader's languages (README, Compatibility).
//
// Bounded per run: the candidates of each kind are capped, and a trend row lives only while its peak is within the
// cooldown or its score is above the listing threshold.
//
// Rows read (D1 bills them; test/integration/cron-rows.test.ts): each kind reads the rows of its window that can count
// and nothing older, joined in the order written (CROSS JOIN) so the planner cannot drive from a whole table:
// - tags: status_tags by its status_id range (two days), then each row's status, author and tag;
// - statuses: the day's favourites (by id) and boosts (statuses_boosts, migrations/0031: the boosts only, by id), the
//   statuses they name, and the accounts of those with enough uses to score (plus the ones trending now);
// - links: status_preview_cards by its status_id range (only originals that carry a card) and the two days' boosts
//   (statuses_boosts), each joined to the boosted status's card row (a boost of a card-less status reads no more).
// Before, tags and links scanned every status of the two days (and, grouping by tag, all of status_tags); on a day
// shaped like the bench's (3,000 statuses in two days) a refresh read 21,000 rows, now 5,500, and no more when the
// database holds months of older statuses.
import { type SQL, sql } from "drizzle-orm";
import { type DB, runBatch, type Statement } from "../db/client";
import { historyDays, type TagHistoryDay } from "../entities/instance/tag";
import { padId, snowflake, snowflakeFloor } from "../lib/text/ids";
import { idList, valueList } from "../db/id-list";
import { LINK_TRENDS, STATUS_TRENDS, TAG_TRENDS } from "../queries/instance/trends";

export { LINK_TRENDS, STATUS_TRENDS, TAG_TRENDS } from "../queries/instance/trends";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** SQL: the host of a URL column (scheme://host[:port]/...), as the publishers are keyed. */
export const urlHost = (col: SQL) =>
  sql`lower(CASE WHEN instr(substr(${col}, instr(${col}, '://') + 3), '/') > 0
    THEN substr(substr(${col}, instr(${col}, '://') + 3), 1, instr(substr(${col}, instr(${col}, '://') + 3), '/') - 1)
    ELSE substr(${col}, instr(${col}, '://') + 3) END)`;

const TAG_CANDIDATES = 1000;
const STATUS_CANDIDATES = 2000;
const LINK_CANDIDATES = 500;
/** Links listed at most (their history is computed each run). */
const LINK_HISTORY_ROWS = 100;

/** Mastodon's score: how far observed exceeds expected, once observed reaches the threshold. */
export function trendScore(observed: number, expected: number, threshold: number): number {
  const e = expected > 0 ? expected : 1;
  if (e > observed || observed < threshold) return 0;
  return (observed - e) ** 2 / e;
}

interface Peak {
  maxScore: number;
  maxScoreAt: number | null;
}

/** The peak within the cooldown (raised by a higher score now) and its decayed value at `at`. */
export function decayPeak(score: number, prev: Peak | undefined, at: number, opts: { maxScoreCooldown: number; maxScoreHalflife: number }) {
  let maxScore = prev?.maxScore ?? 0;
  let maxScoreAt = prev?.maxScoreAt ?? null;
  if (maxScoreAt === null || maxScoreAt < at - opts.maxScoreCooldown) maxScore = 0;
  if (score > maxScore) {
    maxScore = score;
    maxScoreAt = at;
  }
  const decayed = maxScore > 0 && maxScoreAt !== null ? maxScore * 0.5 ** ((at - maxScoreAt) / opts.maxScoreHalflife) : 0;
  return { maxScore, maxScoreAt, decayed };
}

/** Mastodon's options of a trend kept by its decayed peak (tags and links). */
type PeakOptions = { threshold: number; maxScoreCooldown: number; maxScoreHalflife: number; decayThreshold: number };

/** A trend the peak pass keeps: its peak, and today's count and the stored row it came from (either may be missing). */
type KeptTrend<C, S> = ReturnType<typeof decayPeak> & { id: string; counted: C | undefined; stored: S | undefined };

/**
 * The refresh of tags and links (Trends::Tags / Trends::Links): every id counted today or stored is scored against its
 * expected use and its peak raised and decayed; one whose peak lives (decayed over the threshold, or reached within
 * the cooldown) is kept, a stored one whose peak died is dropped.
 */
function peakPass<C extends { observed: number; expected: number }, S extends { max_score: number; max_score_at: number | null }>(
  counted: Map<string, C>,
  stored: Map<string, S>,
  at: number,
  opts: PeakOptions,
): { keep: KeptTrend<C, S>[]; drop: string[] } {
  const keep: KeptTrend<C, S>[] = [];
  const drop: string[] = [];
  for (const id of new Set([...counted.keys(), ...stored.keys()])) {
    const c = counted.get(id);
    const p = stored.get(id);
    const score = c ? trendScore(Number(c.observed), Number(c.expected), opts.threshold) : 0;
    const peak = decayPeak(score, p ? { maxScore: Number(p.max_score), maxScoreAt: p.max_score_at } : undefined, at, opts);
    const alive = peak.maxScore > 0 && peak.maxScoreAt !== null && (peak.decayed >= opts.decayThreshold || peak.maxScoreAt >= at - opts.maxScoreCooldown);
    if (alive) keep.push({ ...peak, id, counted: c, stored: p });
    else if (p) drop.push(id);
  }
  return { keep, drop };
}

const dayStart = (at: number) => Math.floor(at / DAY) * DAY;
const floorOf = (ms: number) => padId(snowflakeFloor(ms));

export async function refreshTrends(db: DB, at: number): Promise<void> {
  const byDefault = await trendableByDefault(db);
  await refreshTagTrends(db, at, byDefault);
  await refreshStatusTrends(db, at, byDefault);
  await refreshLinkTrends(db, at, byDefault);
}

/** Mastodon's Setting.trendable_by_default as 1 or 0 (absent: 0, Mastodon's default). */
export async function trendableByDefault(db: DB): Promise<0 | 1> {
  const rows = await db.all<{ value: string }>(sql`SELECT value FROM instance_settings WHERE key = 'trendable_by_default'`);
  return rows[0]?.value === "1" ? 1 : 0;
}

/** Runs the writes of a refresh: upserted rows as one JSON parameter, dropped ids as another. */
async function write(db: DB, stmts: Statement[]): Promise<void> {
  await runBatch(db, stmts);
}

export async function refreshTagTrends(db: DB, at: number, byDefault: 0 | 1 = 0): Promise<void> {
  const today = dayStart(at);
  const [counts, existing] = await db.batch([
    db.all<{ tag_id: string; observed: number; expected: number; allowed: number }>(sql`SELECT st.tag_id AS tag_id,
        count(DISTINCT CASE WHEN st.status_id >= ${floorOf(today)} THEN s.account_id END) AS observed,
        count(DISTINCT CASE WHEN st.status_id < ${floorOf(today)} THEN s.account_id END) AS expected,
        max(t.trendable = 1 AND (t.reviewed_at IS NOT NULL OR ${byDefault})) AS allowed
      FROM status_tags st
      CROSS JOIN statuses s ON s.id = st.status_id
      CROSS JOIN accounts a ON a.id = s.account_id
      CROSS JOIN tags t ON t.id = st.tag_id
      WHERE st.status_id >= ${floorOf(today - DAY)} AND st.status_id < ${floorOf(today + DAY)}
        AND s.visibility = 'public' AND s.reblog_of_id IS NULL AND s.created_at <= ${at}
        AND a.silenced_at IS NULL AND a.suspended_at IS NULL AND t.usable = 1
      GROUP BY +st.tag_id
      ORDER BY observed DESC
      LIMIT ${TAG_CANDIDATES}`),
    db.all<{ tag_id: string; max_score: number; max_score_at: number | null; allowed: number | null }>(
      sql`SELECT tt.tag_id, tt.max_score, tt.max_score_at, (t.usable = 1 AND t.trendable = 1 AND (t.reviewed_at IS NOT NULL OR ${byDefault})) AS allowed FROM tag_trends tt LEFT JOIN tags t ON t.id = tt.tag_id`,
    ),
  ]);
  const { keep, drop } = peakPass(new Map(counts.map((c) => [c.tag_id, c])), new Map(existing.map((r) => [r.tag_id, r])), at, TAG_TRENDS);
  // A tag the cron saw used stays as usable as the query found it; one it did not see keeps its tag row's state.
  const rows = keep.map((k) => [k.id, k.decayed, k.maxScore, k.maxScoreAt, (k.counted ? Number(k.counted.allowed) : Number(k.stored?.allowed)) === 1 ? 1 : 0]);
  const stmts: Statement[] = [];
  if (rows.length)
    stmts.push(
      db.run(sql`INSERT INTO tag_trends (tag_id, score, max_score, max_score_at, allowed, updated_at)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), ${at} FROM json_each(${JSON.stringify(rows)}) WHERE true
        ON CONFLICT(tag_id) DO UPDATE SET score = excluded.score, max_score = excluded.max_score, max_score_at = excluded.max_score_at,
          allowed = excluded.allowed, updated_at = excluded.updated_at`),
    );
  if (drop.length) stmts.push(db.run(sql`DELETE FROM tag_trends WHERE tag_id IN ${valueList(drop)}`));
  await write(db, stmts);
}

export async function refreshStatusTrends(db: DB, at: number, byDefault: 0 | 1 = 0): Promise<void> {
  const since = floorOf(at - DAY);
  // Statuses favourited or boosted in the last day (Mastodon registers them as used when that happens), and those
  // trending now.
  const rows = await db.all<{
    id: string;
    account_id: string;
    language: string | null;
    created_at: number;
    observed: number;
    eligible: number;
    existing: number;
  }>(sql`WITH candidates(id) AS (
      SELECT status_id FROM favourites WHERE id >= ${since}
      UNION SELECT reblog_of_id FROM statuses INDEXED BY statuses_boosts WHERE id >= ${since} AND reblog_of_id IS NOT NULL
      UNION SELECT status_id FROM status_trends
    )
    SELECT s.id, s.account_id, s.language, s.created_at, s.reblogs_count + s.favourites_count AS observed,
      (s.visibility = 'public' AND s.reblog_of_id IS NULL AND s.in_reply_to_id IS NULL AND s.spoiler_text = '' AND s.sensitive = 0
        AND s.created_at <= ${at} AND a.discoverable = 1 AND a.silenced_at IS NULL AND a.suspended_at IS NULL
        AND a.sensitized_at IS NULL) AS eligible,
      EXISTS (SELECT 1 FROM status_trends st WHERE st.status_id = s.id) AS existing
    FROM candidates c CROSS JOIN statuses s ON s.id = c.id CROSS JOIN accounts a ON a.id = s.account_id
    WHERE s.reblogs_count + s.favourites_count >= ${STATUS_TRENDS.threshold} OR EXISTS (SELECT 1 FROM status_trends st WHERE st.status_id = s.id)
    LIMIT ${STATUS_CANDIDATES}`);
  const keep: unknown[] = [];
  const drop: string[] = [];
  for (const r of rows) {
    const score = trendScore(Number(r.observed), 1, STATUS_TRENDS.threshold);
    const decayed = score > 0 && Number(r.eligible) === 1 ? score * 0.5 ** ((at - r.created_at) / STATUS_TRENDS.scoreHalflife) : 0;
    if (decayed >= STATUS_TRENDS.decayThreshold) keep.push([r.id, r.account_id, decayed, r.language]);
    else if (Number(r.existing) === 1) drop.push(r.id);
  }
  const stmts: Statement[] = [];
  if (keep.length)
    stmts.push(
      // As staff reviewed it (status_trend_reviews, src/services/admin/trends.ts), else trendable_by_default.
      db.run(sql`INSERT INTO status_trends (status_id, account_id, score, language, allowed, updated_at)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          coalesce((SELECT r.trendable FROM status_trend_reviews r WHERE r.status_id = json_extract(value, '$[0]')), ${byDefault}), ${at}
        FROM json_each(${JSON.stringify(keep)}) WHERE true
        ON CONFLICT(status_id) DO UPDATE SET score = excluded.score, language = excluded.language, allowed = excluded.allowed,
          updated_at = excluded.updated_at`),
    );
  if (drop.length) stmts.push(db.run(sql`DELETE FROM status_trends WHERE status_id IN ${valueList(drop)}`));
  // A trending status whose row the candidates missed (deleted statuses go with their trigger) is not left behind.
  stmts.push(db.run(sql`DELETE FROM status_trends WHERE updated_at < ${at}`));
  await write(db, stmts);
}

export async function refreshLinkTrends(db: DB, at: number, byDefault: 0 | 1 = 0): Promise<void> {
  const today = dayStart(at);
  const [from, until, todayFloor] = [floorOf(today - DAY), floorOf(today + DAY), floorOf(today)];
  // A share is a public status carrying the card (status_preview_cards' own id range: only the originals that have a
  // card) or a public boost of one (the boosts' index range, statuses_boosts: a boost of a status without a card finds
  // no card row and reads nothing more), made in the window by an account not silenced or suspended. Each branch is
  // joined in the order written (CROSS JOIN), so neither scans statuses.
  const article = sql`pc.type = 'link' AND pc.link_type = 'article' AND pc.title != '' AND pc.description != '' AND pc.image IS NOT NULL
    AND pc.provider_name != ''`;
  const [counts, existing] = await db.batch([
    db.all<{ card_id: string; observed: number; expected: number; language: string | null }>(sql`WITH shares(card_id, id, account_id, language) AS (
        SELECT spc.preview_card_id, s.id, s.account_id, pc.language
        FROM status_preview_cards spc
        CROSS JOIN statuses s ON s.id = spc.status_id
        CROSS JOIN accounts a ON a.id = s.account_id
        CROSS JOIN preview_cards pc ON pc.id = spc.preview_card_id
        WHERE spc.status_id >= ${from} AND spc.status_id < ${until} AND s.reblog_of_id IS NULL AND s.created_at <= ${at}
          AND s.visibility = 'public' AND s.spoiler_text = '' AND s.sensitive = 0
          AND a.silenced_at IS NULL AND a.suspended_at IS NULL AND ${article}
        UNION ALL
        SELECT spc.preview_card_id, b.id, b.account_id, pc.language
        FROM statuses b INDEXED BY statuses_boosts
        CROSS JOIN status_preview_cards spc ON spc.status_id = b.reblog_of_id
        CROSS JOIN statuses o ON o.id = b.reblog_of_id
        CROSS JOIN accounts a ON a.id = b.account_id
        CROSS JOIN accounts oa ON oa.id = o.account_id
        CROSS JOIN preview_cards pc ON pc.id = spc.preview_card_id
        WHERE b.id >= ${from} AND b.id < ${until} AND b.reblog_of_id IS NOT NULL AND b.created_at <= ${at} AND b.visibility = 'public'
          AND o.visibility = 'public' AND o.spoiler_text = '' AND o.sensitive = 0
          AND a.silenced_at IS NULL AND a.suspended_at IS NULL AND oa.silenced_at IS NULL AND oa.suspended_at IS NULL AND ${article}
      )
      SELECT card_id,
        count(DISTINCT CASE WHEN id >= ${todayFloor} THEN account_id END) AS observed,
        count(DISTINCT CASE WHEN id < ${todayFloor} THEN account_id END) AS expected,
        max(language) AS language
      FROM shares
      GROUP BY card_id
      ORDER BY observed DESC
      LIMIT ${LINK_CANDIDATES}`),
    db.all<{ card_id: string; max_score: number; max_score_at: number | null; language: string | null }>(
      sql`SELECT t.preview_card_id AS card_id, t.max_score, t.max_score_at, pc.language FROM preview_card_trends t
        LEFT JOIN preview_cards pc ON pc.id = t.preview_card_id`,
    ),
  ]);
  const { keep, drop } = peakPass(new Map(counts.map((c) => [c.card_id, c])), new Map(existing.map((r) => [r.card_id, r])), at, LINK_TRENDS);
  // The 7-day history of the links that are listed (as Trends::Link shows it).
  const listed = keep
    .filter((k) => k.decayed >= LINK_TRENDS.decayThreshold)
    .sort((x, y) => y.decayed - x.decayed)
    .slice(0, LINK_HISTORY_ROWS)
    .map((k) => k.id);
  const history = listed.length ? await linkHistories(db, listed, at) : new Map<string, TagHistoryDay[]>();
  const rows = keep.map((k) => [
    k.id,
    k.decayed,
    k.maxScore,
    k.maxScoreAt,
    k.counted?.language ?? k.stored?.language ?? null,
    JSON.stringify(history.get(k.id) ?? historyDays(undefined, at)),
  ]);
  const stmts: Statement[] = [];
  // Publishers of trending links are listed for review (Mastodon's preview_card_providers); a link is allowed unless
  // staff rejected it, or (not reviewed itself) its publisher (src/services/admin/trends.ts).
  if (listed.length)
    stmts.push(
      db.run(sql`INSERT OR IGNORE INTO preview_card_providers (id, domain, created_at)
        SELECT printf('%020d', CAST(${snowflake(at)} AS INTEGER) + row_number() OVER (ORDER BY host)), host, ${at} FROM (
          SELECT DISTINCT ${urlHost(sql`pc.url`)} AS host FROM preview_cards pc
          WHERE pc.id IN ${idList(listed)} AND instr(pc.url, '://') > 0)
        WHERE host <> '' AND host NOT IN (SELECT domain FROM preview_card_providers)`),
    );
  if (rows.length)
    stmts.push(
      db.run(sql`INSERT INTO preview_card_trends (preview_card_id, score, max_score, max_score_at, language, allowed, history, updated_at)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), coalesce(pc.trendable, (SELECT p.trendable FROM preview_card_providers p WHERE p.domain = ${urlHost(sql`pc.url`)}), ${byDefault}),
          json_extract(value, '$[5]'), ${at}
        FROM json_each(${JSON.stringify(rows)}) LEFT JOIN preview_cards pc ON pc.id = json_extract(value, '$[0]') WHERE true
        ON CONFLICT(preview_card_id) DO UPDATE SET score = excluded.score, max_score = excluded.max_score, max_score_at = excluded.max_score_at,
          language = excluded.language, allowed = excluded.allowed, history = excluded.history, updated_at = excluded.updated_at`),
    );
  if (drop.length) stmts.push(db.run(sql`DELETE FROM preview_card_trends WHERE preview_card_id IN ${valueList(drop)}`));
  await write(db, stmts);
}

/** Uses (public statuses and boosts carrying the card) and distinct accounts per UTC day over the last 7 days. */
async function linkHistories(db: DB, cardIds: string[], at: number): Promise<Map<string, TagHistoryDay[]>> {
  const since = floorOf(dayStart(at) - 6 * DAY);
  const ids = JSON.stringify(cardIds.map(padId));
  const d = sql.raw(String(DAY));
  const rows = await db.all<{ card_id: string; day: number; uses: number; accounts: number }>(sql`SELECT card_id, (created_at / ${d}) * ${d} AS day,
      count(*) AS uses, count(DISTINCT account_id) AS accounts
    FROM (
      SELECT spc.preview_card_id AS card_id, s.created_at, s.account_id FROM status_preview_cards spc JOIN statuses s ON s.id = spc.status_id
        WHERE spc.preview_card_id IN (SELECT value FROM json_each(${ids})) AND s.id >= ${since} AND s.visibility = 'public'
      UNION ALL
      SELECT spc.preview_card_id, r.created_at, r.account_id FROM status_preview_cards spc JOIN statuses r ON r.reblog_of_id = spc.status_id
        WHERE spc.preview_card_id IN (SELECT value FROM json_each(${ids})) AND r.id >= ${since} AND r.visibility = 'public'
    )
    GROUP BY card_id, day`);
  const per = new Map<string, Map<number, { uses: number; accounts: number }>>();
  for (const r of rows) {
    const m = per.get(r.card_id) ?? new Map<number, { uses: number; accounts: number }>();
    per.set(r.card_id, m);
    m.set(Number(r.day), { uses: Number(r.uses), accounts: Number(r.accounts) });
  }
  const out = new Map<string, TagHistoryDay[]>();
  for (const [id, m] of per) out.set(id, historyDays(m, at));
  return out;
}
