// Trend review by staff (Mastodon's Api::V1::Admin::Trends::*Controller and their approve/reject): the lists with
// every trend row, allowed or not, best first; approving or rejecting a tag, a link (preview card), a status or a
// link publisher. A rejected item leaves the public trends at once (its trend row's `allowed` is cleared in the same
// batch) and stays out when the cron recomputes (src/trends/refresh.ts reads the review state); an approved one stays.
// Items nobody reviewed still trend (Tern approves automatically) and report requires_review: true.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { type DB, runBatch, type Statement } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { previewCardProviders, previewCards, previewCardTrends, statuses, statusTrendReviews, tagFollows, tags, tagTrends } from "../../db/schema";
import { historyDays, type TagHistoryDay, type TagRow } from "../../entities/instance/tag";
import type { PreviewCardRow } from "../../entities/statuses/preview-card";
import type { AdminTrendLink } from "../../entities/admin/admin-trends";
import { notFound } from "../../lib/http/errors";
import { padId, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { urlHost } from "../../trends/refresh";
import { historiesFrom, historyStatement } from "../tags/tags-follow";
import { logStatement, type Moderator } from "./accounts";
import type { OffsetPage } from "../../lib/http/pagination";
import type { ProviderRow } from "../../db/schema";

export interface AdminTrendTag {
  tag: TagRow;
  history: TagHistoryDay[];
  following: boolean;
}

/** Every trending tag row (allowed or not), best first, with history and whether the viewer follows each. */
export async function adminTrendTags(db: DB, viewerId: string, page: OffsetPage): Promise<AdminTrendTag[]> {
  const ids = sql`(SELECT ${tagTrends.tagId} FROM ${tagTrends} ORDER BY ${tagTrends.score} DESC LIMIT ${page.limit} OFFSET ${page.offset})`;
  const [rows, hist, follows] = await db.batch([
    db.select({ tag: tags }).from(tagTrends).innerJoin(tags, eq(tags.id, tagTrends.tagId)).orderBy(desc(tagTrends.score)).limit(page.limit).offset(page.offset),
    historyStatement(db, ids),
    db
      .select({ tagId: tagFollows.tagId })
      .from(tagFollows)
      .where(and(eq(tagFollows.accountId, viewerId), inArray(tagFollows.tagId, ids))),
  ]);
  const h = historiesFrom(hist);
  const followed = new Set(follows.map((f) => f.tagId));
  return rows.map(({ tag }) => ({ tag, history: h.get(tag.id) ?? historyDays(undefined), following: followed.has(tag.id) }));
}

export interface AdminTrendStatus {
  id: string;
  requiresReview: boolean;
}

export async function adminTrendStatuses(db: DB, page: OffsetPage): Promise<AdminTrendStatus[]> {
  const rows = await db.all<{ id: string; reviewed: number }>(sql`SELECT st.status_id AS id, (r.status_id IS NOT NULL) AS reviewed
    FROM status_trends st LEFT JOIN status_trend_reviews r ON r.status_id = st.status_id
    ORDER BY st.score DESC LIMIT ${page.limit} OFFSET ${page.offset}`);
  return rows.map((r) => ({ id: unpadId(r.id), requiresReview: Number(r.reviewed) !== 1 }));
}

/** A card needs review while neither it nor its publisher was reviewed (PreviewCard#requires_review?). */
const linkSelect = (db: DB) =>
  db
    .select({
      card: previewCards,
      history: previewCardTrends.history,
      providerReviewed: sql<number | null>`(SELECT ${previewCardProviders.reviewedAt} FROM ${previewCardProviders}
        WHERE ${previewCardProviders.domain} = ${urlHost(sql`${previewCards.url}`)})`,
    })
    .from(previewCards)
    .leftJoin(previewCardTrends, eq(previewCardTrends.previewCardId, previewCards.id));

type LinkRow = { card: PreviewCardRow; history: string | null; providerReviewed: number | null };
const toLink = (r: LinkRow): AdminTrendLink => ({
  card: r.card,
  history: parseHistory(r.history),
  requiresReview: r.card.trendable == null && r.providerReviewed == null,
});

export async function adminTrendLinks(db: DB, page: OffsetPage): Promise<AdminTrendLink[]> {
  const rows = await linkSelect(db)
    .where(sql`${previewCards.id} IN (SELECT ${previewCardTrends.previewCardId} FROM ${previewCardTrends})`)
    .orderBy(desc(previewCardTrends.score))
    .limit(page.limit)
    .offset(page.offset);
  return rows.map(toLink);
}

export async function adminTrendProviders(db: DB, page: Page): Promise<ProviderRow[]> {
  const rows = await db
    .select()
    .from(previewCardProviders)
    .where(cursorWhere(previewCardProviders.id, page))
    .orderBy(cursorOrder(previewCardProviders.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

function parseHistory(raw: string | null): TagHistoryDay[] {
  try {
    const v = JSON.parse(raw ?? "[]");
    return Array.isArray(v) ? (v as TagHistoryDay[]) : historyDays(undefined);
  } catch {
    return historyDays(undefined);
  }
}

const verb = (approve: boolean) => (approve ? "approve" : "reject");

/** Tag#trendable with reviewed_at (the tag's trend row follows at once). */
export async function reviewTag(db: DB, actor: Moderator, id: string, approve: boolean): Promise<{ tag: TagRow; history: TagHistoryDay[] }> {
  const [exists] = await db.select({ id: tags.id }).from(tags).where(eq(tags.id, id)).limit(1);
  if (!exists) throw notFound();
  const now = Date.now();
  const [updated, , , hist] = await runBatch(db, [
    db.update(tags).set({ trendable: approve, reviewedAt: now, requestedReviewAt: null }).where(eq(tags.id, id)).returning(),
    db.run(sql`UPDATE tag_trends SET allowed = (${approve ? 1 : 0} AND (SELECT usable FROM tags WHERE id = ${padId(id)})) WHERE tag_id = ${padId(id)}`),
    logStatement(db, actor, verb(approve), "Tag", id, now),
    historyStatement(db, [id]),
  ]);
  const tag = (updated as TagRow[])[0];
  if (!tag) throw notFound();
  return { tag, history: historiesFrom(hist as Parameters<typeof historiesFrom>[0]).get(id) ?? historyDays(undefined) };
}

/** A status's review state (statuses.trendable in Mastodon). */
export async function reviewStatus(db: DB, actor: Moderator, id: string, approve: boolean): Promise<void> {
  const [s] = await db.select({ id: statuses.id }).from(statuses).where(eq(statuses.id, id)).limit(1);
  if (!s) throw notFound();
  const now = Date.now();
  await db.batch([
    db
      .insert(statusTrendReviews)
      .values({ statusId: id, trendable: approve, reviewedAt: now })
      .onConflictDoUpdate({ target: statusTrendReviews.statusId, set: { trendable: approve, reviewedAt: now } }),
    db.run(sql`UPDATE status_trends SET allowed = ${approve ? 1 : 0} WHERE status_id = ${padId(id)}`),
    logStatement(db, actor, verb(approve), "Status", id, now),
  ]);
}

/** PreviewCard#trendable. */
export async function reviewLink(db: DB, actor: Moderator, id: string, approve: boolean): Promise<AdminTrendLink> {
  const [exists] = await db.select({ id: previewCards.id }).from(previewCards).where(eq(previewCards.id, id)).limit(1);
  if (!exists) throw notFound();
  const now = Date.now();
  const [, , , rows] = await runBatch(db, [
    db.update(previewCards).set({ trendable: approve }).where(eq(previewCards.id, id)),
    db.run(sql`UPDATE preview_card_trends SET allowed = ${approve ? 1 : 0} WHERE preview_card_id = ${padId(id)}`),
    logStatement(db, actor, verb(approve), "PreviewCard", id, now),
    linkSelect(db).where(eq(previewCards.id, id)).limit(1),
  ]);
  const row = (rows as LinkRow[])[0];
  if (!row) throw notFound();
  return toLink(row);
}

/** PreviewCardProvider#trendable with reviewed_at: the publisher's unreviewed cards follow it in the trends. */
export async function reviewProvider(db: DB, actor: Moderator, id: string, approve: boolean): Promise<ProviderRow> {
  const [p] = await db.select().from(previewCardProviders).where(eq(previewCardProviders.id, id)).limit(1);
  if (!p) throw notFound();
  const now = Date.now();
  const stmts: Statement[] = [
    db.update(previewCardProviders).set({ trendable: approve, reviewedAt: now, requestedReviewAt: null }).where(eq(previewCardProviders.id, id)),
    db.run(sql`UPDATE preview_card_trends SET allowed = ${approve ? 1 : 0} WHERE preview_card_id IN (
      SELECT id FROM preview_cards WHERE trendable IS NULL AND ${urlHost(sql`url`)} = ${p.domain})`),
    logStatement(db, actor, verb(approve), "PreviewCardProvider", id, now),
  ];
  await runBatch(db, stmts);
  return { ...p, trendable: approve, reviewedAt: now, requestedReviewAt: null };
}
