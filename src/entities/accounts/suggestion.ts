// Suggestion entity (docs.joinmastodon.org/entities/Suggestion): an account suggested to follow, why (`sources`), and
// the one legacy `source` Mastodon still renders for older clients (GET /api/v2/suggestions).
import type { SuggestionSource } from "../../queries/accounts/suggestions";
import type { MastodonAccount } from "./account";

/** Mastodon's legacy `source` for each of its `sources`. */
const LEGACY_SOURCE = { friends_of_friends: "past_interactions", most_followed: "global" } as const satisfies Record<SuggestionSource, string>;

export interface MastodonSuggestion {
  source: (typeof LEGACY_SOURCE)[SuggestionSource];
  sources: SuggestionSource[];
  account: MastodonAccount;
}

/** `account` is already rendered (the legacy GET /api/v1/suggestions answers the accounts alone). */
export function renderSuggestion(sources: SuggestionSource[], account: MastodonAccount): MastodonSuggestion {
  return { source: LEGACY_SOURCE[sources[0] ?? "most_followed"], sources, account };
}
