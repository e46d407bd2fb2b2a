import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

/**
 * Link previews (Mastodon's preview_cards; migrations/0015_preview_cards_trends.sql). One row per URL (the page's
 * canonical URL), shared by every status that links it; refetched after two weeks. `image` stays the remote URL;
 * `image_key` is its copy in R2 once fetched (0054). Text fields are plain text; `html` is only ever an <iframe> written
 * by Tern itself.
 */
export const previewCards = lazyTable(() =>
  sqliteTable(
    "preview_cards",
    {
      id: id("id").primaryKey(),
      url: text("url").notNull(),
      title: text("title").notNull().default(""),
      description: text("description").notNull().default(""),
      type: text("type").$type<"link" | "photo" | "video" | "rich">().notNull().default("link"),
      /** "article" (og:type article) or "unknown": only articles trend (Mastodon's link_type). */
      linkType: text("link_type").$type<"article" | "unknown">().notNull().default("unknown"),
      authorName: text("author_name").notNull().default(""),
      authorUrl: text("author_url").notNull().default(""),
      providerName: text("provider_name").notNull().default(""),
      providerUrl: text("provider_url").notNull().default(""),
      html: text("html").notNull().default(""),
      width: integer("width").notNull().default(0),
      height: integer("height").notNull().default(0),
      image: text("image"),
      imageKey: text("image_key"),
      imageDescription: text("image_description").notNull().default(""),
      embedUrl: text("embed_url").notNull().default(""),
      language: text("language"),
      publishedAt: ms("published_at"),
      createdAt: ms("created_at").notNull(),
      fetchedAt: ms("fetched_at").notNull(),
      /** Staff review (0020): null = not reviewed (trends unless its provider is rejected), false = rejected, true = approved. */
      trendable: bool("trendable"),
    },
    (t) => [uniqueIndex("preview_cards_url").on(t.url), index("preview_cards_fetched").on(t.fetchedAt)],
  ),
);

/** The card of a status (at most one, as Mastodon's preview_cards_statuses), with the URL as the status wrote it. */
export const statusPreviewCards = lazyTable(() =>
  sqliteTable(
    "status_preview_cards",
    {
      statusId: id("status_id").primaryKey(),
      previewCardId: id("preview_card_id").notNull(),
      url: text("url").notNull(),
    },
    (t) => [index("status_preview_cards_card").on(t.previewCardId, t.statusId), index("status_preview_cards_url").on(t.url)],
  ),
);

/**
 * Trending hashtags as the cron last computed them (Mastodon's tag_trends plus the tag's max_score/max_score_at).
 * A row stays while its peak is within the cooldown, so a peak keeps decaying instead of restarting.
 */
export const tagTrends = lazyTable(() =>
  sqliteTable(
    "tag_trends",
    {
      tagId: id("tag_id").primaryKey(),
      score: real("score").notNull(),
      maxScore: real("max_score").notNull(),
      maxScoreAt: ms("max_score_at"),
      allowed: bool("allowed").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("tag_trends_score").on(t.allowed, t.score)],
  ),
);

/** Trending statuses (Mastodon's status_trends): decayed score, the status's language for ordering. */
export const statusTrends = lazyTable(() =>
  sqliteTable(
    "status_trends",
    {
      statusId: id("status_id").primaryKey(),
      accountId: id("account_id").notNull(),
      score: real("score").notNull(),
      language: text("language"),
      allowed: bool("allowed").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("status_trends_score").on(t.allowed, t.score)],
  ),
);

/** Trending links (Mastodon's preview_card_trends plus the card's max score), with the 7-day history shown. */
export const previewCardTrends = lazyTable(() =>
  sqliteTable(
    "preview_card_trends",
    {
      previewCardId: id("preview_card_id").primaryKey(),
      score: real("score").notNull(),
      maxScore: real("max_score").notNull(),
      maxScoreAt: ms("max_score_at"),
      language: text("language"),
      allowed: bool("allowed").notNull(),
      /** JSON: [{day, uses, accounts}] newest first, as the API shows it. */
      history: text("history").notNull().default("[]"),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [index("preview_card_trends_score").on(t.allowed, t.score)],
  ),
);

/** Staff review of a status as a trend (Mastodon's statuses.trendable); a row only once reviewed (0020). */
export const statusTrendReviews = lazyTable(() =>
  sqliteTable("status_trend_reviews", {
    statusId: id("status_id").primaryKey(),
    trendable: bool("trendable").notNull(),
    reviewedAt: ms("reviewed_at").notNull(),
  }),
);

/** Publishers of trending links (Mastodon's preview_card_providers), by domain, with their review state (0020). */
export const previewCardProviders = lazyTable(() =>
  sqliteTable(
    "preview_card_providers",
    {
      id: id("id").primaryKey(),
      domain: text("domain").notNull(),
      trendable: bool("trendable"),
      reviewedAt: ms("reviewed_at"),
      requestedReviewAt: ms("requested_review_at"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("preview_card_providers_domain").on(t.domain)],
  ),
);

export type ProviderRow = typeof previewCardProviders.$inferSelect;
