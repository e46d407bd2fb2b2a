// Filter rows → Mastodon JSON: Filter (v2, with its keywords and statuses), FilterKeyword, FilterStatus, and the
// legacy V1::Filter (one per keyword: the keyword's id and text, its filter's context, expiry and action).
import type { customFilterKeywords, customFilters, customFilterStatuses } from "../db/schema";
import { filterJson, type MastodonFilterBase } from "../policy/filter-match";

export type FilterRow = typeof customFilters.$inferSelect;
export type FilterKeywordRow = typeof customFilterKeywords.$inferSelect;
export type FilterStatusRow = typeof customFilterStatuses.$inferSelect;

export interface FilterWithRules {
  filter: FilterRow;
  keywords: FilterKeywordRow[];
  statuses: FilterStatusRow[];
}

export interface MastodonFilterKeyword {
  id: string;
  keyword: string;
  whole_word: boolean;
}

export interface MastodonFilterStatus {
  id: string;
  status_id: string;
}

/** Filter (v2) with its rules; FilterResult carries it without them (policy/filter-match.ts MastodonFilterBase). */
export interface MastodonFilter extends MastodonFilterBase {
  keywords: MastodonFilterKeyword[];
  statuses: MastodonFilterStatus[];
}

/** V1::Filter: one per keyword. */
export interface MastodonV1Filter {
  id: string;
  phrase: string;
  context: FilterRow["context"];
  whole_word: boolean;
  expires_at: string | null;
  irreversible: boolean;
}

export const renderFilterKeyword = (k: FilterKeywordRow): MastodonFilterKeyword => ({ id: k.id, keyword: k.keyword, whole_word: k.wholeWord });

export const renderFilterStatus = (s: FilterStatusRow): MastodonFilterStatus => ({ id: s.id, status_id: s.statusId });

export function renderFilter(f: FilterWithRules): MastodonFilter {
  return { ...filterJson(f.filter), keywords: f.keywords.map(renderFilterKeyword), statuses: f.statuses.map(renderFilterStatus) };
}

export function renderV1Filter(k: FilterKeywordRow, f: FilterRow): MastodonV1Filter {
  return {
    id: k.id,
    phrase: k.keyword,
    context: f.context,
    whole_word: k.wholeWord,
    expires_at: f.expiresAt == null ? null : new Date(f.expiresAt).toISOString(),
    irreversible: f.action === "hide",
  };
}
