// Reads behind /api/v1/trends/*: the rows the cron scored (src/trends/refresh.ts), best first, paged with offset and
// limit as Mastodon's Trends::Query. Statuses and links are ordered by the reader's languages first (Mastodon's
// language_order_clause: the signed-in user's chosen languages, else the request's locale), then by score. One D1
// round trip each (statuses then go through the status renderer's one batch).
import { and, eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { previewCards, previewCardTrends, tagFollows, tags, tagTrends } from "../../db/schema";
import type { PreviewCardRow } from "../../entities/statuses/preview-card";
import { historyDays, type TagHistoryDay, type TagRow } from "../../entities/instance/tag";
import { unpadId } from "../../lib/text/ids";
import { historiesFrom, historyStatement } from "./tag-history";
import { hiddenAuthorFor } from "../../policy/visibility";
import type { OffsetPage } from "../../lib/http/pagination";
import { valueList } from "../../db/id-list";

// The scoring parameters (src/trends/refresh.ts scores with them; the reads apply the thresholds).
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Trends::Tags.default_options */
export const TAG_TRENDS = { threshold: 5, maxScoreCooldown: 2 * DAY, maxScoreHalflife: 4 * HOUR, decayThreshold: 1 } as const;
/** Trends::Statuses.default_options */
export const STATUS_TRENDS = { threshold: 5, scoreHalflife: HOUR, decayThreshold: 0.3 } as const;
/** Trends::Links.default_options, with the spec's threshold of 15 unique accounts */
export const LINK_TRENDS = { threshold: 15, maxScoreCooldown: 2 * DAY, maxScoreHalflife: 8 * HOUR, decayThreshold: 1 } as const;

const languageFirst = (col: string, languages: string[]) => sql`(coalesce(${sql.raw(col)}, '') IN ${valueList(languages)}) DESC`;

export interface TrendingTag {
  tag: TagRow;
  history: TagHistoryDay[];
  following: boolean;
}

/** Trending tags with their 7-day history and, for a signed-in viewer, whether they follow each. */
export async function trendingTags(db: DB, viewerId: string | null, page: OffsetPage): Promise<TrendingTag[]> {
  const listed = and(eq(tagTrends.allowed, true), sql`${tagTrends.score} >= ${TAG_TRENDS.decayThreshold}`);
  const ids = sql`(SELECT ${tagTrends.tagId} FROM ${tagTrends} WHERE ${listed} ORDER BY ${tagTrends.score} DESC LIMIT ${page.limit} OFFSET ${page.offset})`;
  const [rows, hist, follows] = await db.batch([
    db
      .select({ tag: tags })
      .from(tagTrends)
      .innerJoin(tags, eq(tags.id, tagTrends.tagId))
      .where(listed)
      .orderBy(sql`${tagTrends.score} DESC`)
      .limit(page.limit)
      .offset(page.offset),
    historyStatement(db, ids),
    db
      .select({ tagId: tagFollows.tagId })
      .from(tagFollows)
      .where(and(eq(tagFollows.accountId, viewerId ?? "0"), inArray(tagFollows.tagId, ids))),
  ]);
  const h = historiesFrom(hist);
  const followed = new Set(follows.map((f) => f.tagId));
  return rows.map(({ tag }) => ({ tag, history: h.get(tag.id) ?? historyDays(undefined), following: followed.has(tag.id) }));
}

/** Ids of trending statuses, the reader's languages first; blocked, muted and domain-blocked authors left out. */
export async function trendingStatusIds(db: DB, viewerId: string | null, languages: string[], page: OffsetPage): Promise<string[]> {
  const hidden = viewerId ? sql`AND NOT ${hiddenAuthorFor(viewerId, sql`st.account_id`)}` : sql``;
  const rows = await db.all<{ id: string }>(sql`SELECT st.status_id AS id FROM status_trends st
    WHERE st.allowed = 1 AND st.score >= ${STATUS_TRENDS.decayThreshold} ${hidden}
    ORDER BY ${languageFirst("st.language", languages)}, st.score DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`);
  return rows.map((r) => unpadId(r.id));
}

export interface TrendingLink {
  card: PreviewCardRow;
  history: TagHistoryDay[];
}

/** Trending links (cards) with the history the cron stored, the reader's languages first. */
export async function trendingLinks(db: DB, languages: string[], page: OffsetPage): Promise<TrendingLink[]> {
  const rows = await db
    .select({ card: previewCards, history: previewCardTrends.history })
    .from(previewCardTrends)
    .innerJoin(previewCards, eq(previewCards.id, previewCardTrends.previewCardId))
    .where(and(eq(previewCardTrends.allowed, true), sql`${previewCardTrends.score} >= ${LINK_TRENDS.decayThreshold}`))
    .orderBy(languageFirst("preview_card_trends.language", languages), sql`${previewCardTrends.score} DESC`)
    .limit(page.limit)
    .offset(page.offset);
  return rows.map((r) => ({ card: r.card, history: parseHistory(r.history) }));
}

function parseHistory(raw: string): TagHistoryDay[] {
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? (v as TagHistoryDay[]) : [];
  } catch {
    return [];
  }
}
