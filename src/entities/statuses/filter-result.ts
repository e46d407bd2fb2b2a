// FilterResult entity (docs.joinmastodon.org/entities/FilterResult): a filter of the viewer's that matched a status,
// and what matched (policy/filter-match.ts matchFilters), as a status's `filtered` shows it, in the API and on the
// streaming API.
import type { FilterMatch } from "../../policy/filter-match";
import { type MastodonFilterBase, renderFilterBase } from "./filter";

export interface MastodonFilterResult {
  /** The Filter without its keywords and statuses. */
  filter: MastodonFilterBase;
  keyword_matches: string[] | null;
  status_matches: string[] | null;
}

export function renderFilterResults(matches: FilterMatch[]): MastodonFilterResult[] {
  return matches.map((m) => ({ filter: renderFilterBase(m.filter), keyword_matches: m.keywordMatches, status_matches: m.statusMatches }));
}
