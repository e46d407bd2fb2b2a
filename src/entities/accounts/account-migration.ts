// Tern's own migration state (GET /api/tern/migration; Mastodon has it only as the /settings/migration form): the
// account moved to, its aliases (alsoKnownAs), its recent moves, and when the next move is allowed.
import type { AccountMigrationRow, AccountRow, RenderAccountRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAccount, type MastodonAccount } from "./account";
import { isoTime } from "../urls";

/** One move the account made. */
export interface TernAccountMigration {
  id: string;
  acct: string;
  /** null once the account moved to is gone. */
  target_account_id: string | null;
  created_at: string;
}

export interface TernMigrationState {
  moved_to: MastodonAccount | null;
  also_known_as: string[];
  migrations: TernAccountMigration[];
  cooldown_until: string | null;
}

/** What src/services/accounts/account-migration.ts migrationState reads (cooldownUntil in ms, null when now). */
export interface MigrationStateRows {
  movedTo: RenderAccountRow | null;
  migrations: AccountMigrationRow[];
  cooldownUntil: number | null;
}

export function renderMigrationState(cfg: Config, a: Pick<AccountRow, "alsoKnownAs">, s: MigrationStateRows): TernMigrationState {
  return {
    moved_to: s.movedTo ? renderAccount(cfg, s.movedTo) : null,
    also_known_as: a.alsoKnownAs ?? [],
    migrations: s.migrations.map((m) => ({ id: m.id, acct: m.acct, target_account_id: m.targetAccountId, created_at: isoTime(m.createdAt) })),
    cooldown_until: s.cooldownUntil ? isoTime(s.cooldownUntil) : null,
  };
}

/** POST /api/tern/migration's answer: the account moved to. */
export function renderMoved(cfg: Config, target: RenderAccountRow): { moved_to: MastodonAccount } {
  return { moved_to: renderAccount(cfg, target) };
}
