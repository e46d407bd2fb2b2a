// Endorsements (featured accounts): an account the user follows, shown on their profile.
import { and, eq, isNull } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountPins, accounts } from "../../db/schema";
import { validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import type { MastodonRelationship } from "../../entities/accounts/relationship";
import { accountsByRelation, type AccountPageRow } from "../../queries/accounts/accounts";
import { writeThenRelationship } from "./follows";
import { loadPair, notSelf } from "./relationships";

export async function endorse(db: DB, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  if (!p.follow) throw validationFailed("You must be following this account to endorse it");
  const now = Date.now();
  return writeThenRelationship(
    db,
    [
      db
        .insert(accountPins)
        .values({ id: snowflake(now), accountId: viewerId, targetAccountId: targetId, createdAt: now })
        .onConflictDoNothing(),
    ],
    viewerId,
    targetId,
  );
}

export async function unendorse(db: DB, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  return writeThenRelationship(
    db,
    [db.delete(accountPins).where(and(eq(accountPins.accountId, viewerId), eq(accountPins.targetAccountId, targetId)))],
    viewerId,
    targetId,
  );
}

export function endorsementsPage(db: DB, ownerId: string, page: Page): Promise<AccountPageRow[]> {
  const rel = { table: accountPins, id: accountPins.id, owner: accountPins.accountId, account: accountPins.targetAccountId };
  return accountsByRelation(db, rel, ownerId, page, isNull(accounts.suspendedAt));
}
