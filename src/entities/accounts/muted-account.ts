// MutedAccount (GET /api/v1/mutes): an Account with `mute_expires_at`, when the mute ends (null: it does not), as
// Mastodon renders its mutes (REST::MutedAccountSerializer).
import type { RenderAccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAccount, type MastodonAccount } from "./account";
import { isoTime } from "../urls";

export interface MastodonMutedAccount extends MastodonAccount {
  mute_expires_at: string | null;
}

export function renderMutedAccount(cfg: Config, a: RenderAccountRow, expiresAt: number | null): MastodonMutedAccount {
  return { ...renderAccount(cfg, a), mute_expires_at: isoTime(expiresAt) };
}
