// Filter rows → Mastodon JSON: Filter (v2, with its keywords and statuses), FilterKeyword, FilterStatus, and the
// legacy V1::Filter (one per keyword: the keyword's id and text, its filter's context, expiry and action).
import type { customFilterKeywords, customFilters, customFilterStatuses, FilterAction, FilterContext } from "../../db/schema/index";

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

/** The Filter entity without its rules (as FilterResult, ./filter-result.ts, and the filter list without rules show it). */
export interface MastodonFilterBase {
  id: string;
  title: string;
  context: FilterContext[];
  expires_at: string | null;
  filter_action: FilterAction;
}

/** Filter (v2) with its rules; FilterResult carries it without them (MastodonFilterBase). */
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

/** A filter's own fields: from its row, or from a compiled filter (policy/filter-match.ts CompiledFilter). */
export function renderFilterBase(f: Pick<FilterRow, "id" | "title" | "context" | "action" | "expiresAt">): MastodonFilterBase {
  return {
    id: f.id,
    title: f.title,
    context: f.context,
    expires_at: f.expiresAt == null ? null : new Date(f.expiresAt).toISOString(),
    filter_action: f.action,
  };
}

export function renderFilter(f: FilterWithRules): MastodonFilter {
  return { ...renderFilterBase(f.filter), keywords: f.keywords.map(renderFilterKeyword), statuses: f.statuses.map(renderFilterStatus) };
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
