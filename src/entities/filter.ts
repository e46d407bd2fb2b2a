// Filter rows → Mastodon JSON: Filter (v2, with its keywords and statuses), FilterKeyword, FilterStatus, and the
// legacy V1::Filter (one per keyword: the keyword's id and text, its filter's context, expiry and action).
import type { customFilterKeywords, customFilters, customFilterStatuses } from "../db/schema";
import { filterJson } from "../policy/filter-match";

export type FilterRow = typeof customFilters.$inferSelect;
export type FilterKeywordRow = typeof customFilterKeywords.$inferSelect;
export type FilterStatusRow = typeof customFilterStatuses.$inferSelect;

export interface FilterWithRules {
  filter: FilterRow;
  keywords: FilterKeywordRow[];
  statuses: FilterStatusRow[];
}

export const renderFilterKeyword = (k: FilterKeywordRow) => ({ id: k.id, keyword: k.keyword, whole_word: k.wholeWord });

export const renderFilterStatus = (s: FilterStatusRow) => ({ id: s.id, status_id: s.statusId });

export function renderFilter(f: FilterWithRules) {
  return { ...filterJson(f.filter), keywords: f.keywords.map(renderFilterKeyword), statuses: f.statuses.map(renderFilterStatus) };
}

export function renderV1Filter(k: FilterKeywordRow, f: FilterRow) {
  return {
    id: k.id,
    phrase: k.keyword,
    context: f.context,
    whole_word: k.wholeWord,
    expires_at: f.expiresAt == null ? null : new Date(f.expiresAt).toISOString(),
    irreversible: f.action === "hide",
  };
}
