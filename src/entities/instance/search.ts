// Search entity, v2 (docs.joinmastodon.org/entities/Search): the accounts, statuses and hashtags that GET
// /api/v2/search found, each rendered as its own entity (the statuses already, by renderStatuses).
import type { RenderAccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import type { MastodonStatus } from "../statuses/status";
import type { FeatureDecision } from "../../policy/feature";
import { renderTag, type MastodonTag, type TagHistoryDay, type TagRow } from "./tag";

export interface MastodonSearch {
  accounts: MastodonAccount[];
  statuses: MastodonStatus[];
  hashtags: MastodonTag[];
}

export function renderSearch(
  cfg: Config,
  accounts: RenderAccountRow[],
  statuses: MastodonStatus[],
  tags: { tag: Pick<TagRow, "id" | "name" | "displayName">; history: TagHistoryDay[] }[],
  /** The viewer's feature decisions by account id (src/services/relationships/feature-approval.ts). */
  featureDecisions: Map<string, FeatureDecision> = new Map(),
): MastodonSearch {
  return {
    accounts: accounts.map((a) => renderAccount(cfg, a, null, null, featureDecisions.get(a.id))),
    statuses,
    hashtags: tags.map((t) => renderTag(cfg, t.tag, t.history)),
  };
}
