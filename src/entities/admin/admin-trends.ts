// The staff views of trends: Admin::Tag (REST::Admin::TagSerializer: the tag with id, trendable, usable and
// requires_review), Admin trends links (Trends::Link with id and requires_review), statuses (Status with
// requires_review) and link publishers (REST::Admin::Trends::Links::PreviewCardProviderSerializer).
import type { Config } from "../../env";
import type { PreviewCardRow } from "../statuses/preview-card";
import { renderTrendLink, type MastodonTrendLink } from "../statuses/preview-card";
import type { MastodonStatus } from "../statuses/status";
import { renderTag, type MastodonTag, type TagHistoryDay, type TagRow } from "../instance/tag";
import { isoTime } from "../urls";
import type { ProviderRow } from "../../db/schema/index";

/** A trending link as the admin API shows it (services/admin/trends.ts reads it). */
export interface AdminTrendLink {
  card: PreviewCardRow;
  history: TagHistoryDay[];
  requiresReview: boolean;
}

/** Admin::Tag. */
export interface MastodonAdminTag extends MastodonTag {
  trendable: boolean;
  usable: boolean;
  requires_review: boolean;
}

/** A trending link as staff see it. */
export interface MastodonAdminTrendLink extends MastodonTrendLink {
  id: string;
  requires_review: boolean;
}

/** A link publisher (Admin trends links publishers). */
export interface MastodonAdminPreviewCardProvider {
  id: string;
  domain: string;
  trendable: boolean;
  reviewed_at: string | null;
  requested_review_at: string | null;
  requires_review: boolean;
}

/** A trending status as staff see it: the Status with requires_review. */
export interface MastodonAdminTrendStatus extends MastodonStatus {
  requires_review: boolean;
}

export function renderAdminTrendStatus(s: MastodonStatus, requiresReview: boolean): MastodonAdminTrendStatus {
  return { ...s, requires_review: requiresReview };
}

export function renderAdminTag(cfg: Config, tag: TagRow, history: TagHistoryDay[], following: boolean): MastodonAdminTag {
  return {
    ...renderTag(cfg, tag, history, { following }),
    id: tag.id,
    trendable: tag.trendable,
    usable: tag.usable,
    requires_review: tag.reviewedAt == null,
  };
}

export function renderAdminTrendLink(cfg: Pick<Config, "origin">, l: AdminTrendLink): MastodonAdminTrendLink {
  return { ...renderTrendLink(cfg, l.card, l.history), id: l.card.id, requires_review: l.requiresReview };
}

export function renderPreviewCardProvider(p: ProviderRow): MastodonAdminPreviewCardProvider {
  return {
    id: p.id,
    domain: p.domain,
    trendable: p.trendable ?? false,
    reviewed_at: isoTime(p.reviewedAt),
    requested_review_at: isoTime(p.requestedReviewAt),
    requires_review: p.reviewedAt == null,
  };
}
