// FamiliarFollowers entity (docs.joinmastodon.org/entities/FamiliarFollowers): for each account asked about, the
// accounts the viewer follows that follow it (GET /api/v1/accounts/familiar_followers), in the order asked.
import type { RenderAccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAccount, type MastodonAccount } from "./account";

export interface MastodonFamiliarFollowers {
  id: string;
  accounts: MastodonAccount[];
}

/** One entry per id asked about; `followers` holds the familiar followers found (src/queries/accounts/accounts.ts). */
export function renderFamiliarFollowers(cfg: Config, ids: string[], followers: Map<string, RenderAccountRow[]>): MastodonFamiliarFollowers[] {
  return ids.map((id) => ({ id, accounts: (followers.get(id) ?? []).map((a) => renderAccount(cfg, a)) }));
}
