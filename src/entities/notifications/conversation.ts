// Conversation entity (docs.joinmastodon.org/entities/Conversation): an account's direct-message thread with its
// other participants (the account itself when there are none) and its newest status as the account sees it.
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import { unpadId } from "../../lib/text/ids";
import { accountsByIds } from "../../queries/accounts/accounts";
import type { AccountConversationRow } from "../../queries/notifications/conversations";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import { loadStatusBundle, renderStatusFrom, type MastodonStatus } from "../statuses/status";

export interface MastodonConversation {
  id: string;
  unread: boolean;
  accounts: MastodonAccount[];
  last_status: MastodonStatus | null;
}

const participantsOf = (row: AccountConversationRow): string[] => {
  try {
    const ids = JSON.parse(row.participantIds) as unknown;
    return Array.isArray(ids) ? ids.map((i) => unpadId(String(i))) : [];
  } catch {
    return [];
  }
};

/**
 * Renders conversations in the given order for their owner `viewerId`: two reads whatever the count (the statuses'
 * bundle and the participants), run side by side.
 */
export async function renderConversations(db: DB, cfg: Config, rows: AccountConversationRow[], viewerId: string): Promise<MastodonConversation[]> {
  if (!rows.length) return [];
  const participants = rows.map(participantsOf);
  const accountIds = [...new Set([viewerId, ...participants.flat()])];
  const [bundle, accounts] = await Promise.all([
    loadStatusBundle(
      db,
      rows.map((r) => r.lastStatusId),
      viewerId,
    ),
    accountsByIds(db, accountIds),
  ]);
  const byId = new Map(accounts.map((a) => [a.id, a]));
  return rows.map((row, i) => {
    const others = (participants[i] ?? []).flatMap((id) => {
      const a = byId.get(id);
      return a ? [renderAccount(cfg, a)] : [];
    });
    const self = byId.get(viewerId);
    return {
      id: String(row.id),
      unread: row.unread,
      accounts: others.length || !self ? others : [renderAccount(cfg, self)],
      last_status: renderStatusFrom(cfg, bundle, row.lastStatusId),
    };
  });
}
