// Blocking ends every follow and request between the two accounts, both ways, in the same batch as the block.
// `blockChange` is the one block, whether a local user blocks (REST) or a remote actor does (Block received), and
// `unblockStatement` the one unblock (REST's unblock, an Undo{Block} received).
import { and, eq, or, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountPins, accounts, blocks } from "../../db/schema";
import { newActivityUri, type Effects } from "../../effects/collector";
import type { MastodonRelationship } from "../../entities/accounts/relationship";
import { snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { accountsByRelation, type AccountPageRow } from "../../queries/accounts/accounts";
import { severStatements, writeThenRelationship, type Change } from "./follows";
import { loadPair, notSelf } from "./relationships";

/** `blockerId` blocks `targetId`: follows and requests end both ways, endorsements too, feeds are cleaned. */
export function blockChange(db: DB, blockerId: string, targetId: string, uri: string | null): Change {
  const now = Date.now();
  return {
    stmts: [
      db
        .insert(blocks)
        .values({ id: snowflake(now), accountId: blockerId, targetAccountId: targetId, uri, createdAt: now })
        .onConflictDoNothing(),
      ...severStatements(db, blockerId, targetId),
      db
        .delete(accountPins)
        .where(
          or(
            and(eq(accountPins.accountId, blockerId), eq(accountPins.targetAccountId, targetId)),
            and(eq(accountPins.accountId, targetId), eq(accountPins.targetAccountId, blockerId)),
          ),
        ),
    ],
    effects: (fx) =>
      fx.add(
        { type: "unmerge_feed", accountId: blockerId, targetAccountId: targetId },
        { type: "unmerge_feed", accountId: targetId, targetAccountId: blockerId },
        // Open public and hashtag streams of both filter by blocks both ways.
        { type: "relations_changed", accountIds: [blockerId, targetId] },
      ),
  };
}

export async function block(db: DB, fx: Effects, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  const blockUri = p.target.domain && !p.blocking ? newActivityUri(fx.origin) : null;
  const change = blockChange(db, viewerId, targetId, blockUri);
  return writeThenRelationship(db, change.stmts, viewerId, targetId, fx, (fx) => {
    change.effects(fx);
    if (blockUri) fx.federate({ kind: "block", accountId: viewerId, targetAccountId: targetId, blockUri });
  });
}

/**
 * `blockerId`'s block ends: the one of `targetId`, or the one made by the activity `uri` (an Undo{Block} may name
 * either). Answers the ids of the rows removed.
 */
export function unblockStatement(db: DB, blockerId: string, by: { targetId?: string | null; uri?: string | null }) {
  const match = [];
  if (by.targetId) match.push(eq(blocks.targetAccountId, by.targetId));
  if (by.uri) match.push(eq(blocks.uri, by.uri));
  return db
    .delete(blocks)
    .where(and(eq(blocks.accountId, blockerId), match.length ? or(...match) : sql`0`))
    .returning({ id: blocks.id });
}

export async function unblock(db: DB, fx: Effects, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const mine = and(eq(blocks.accountId, viewerId), eq(blocks.targetAccountId, targetId));
  const [prior] = await db
    .select({ uri: blocks.uri, domain: accounts.domain })
    .from(blocks)
    .innerJoin(accounts, eq(accounts.id, blocks.targetAccountId))
    .where(mine)
    .limit(1);
  return writeThenRelationship(db, [unblockStatement(db, viewerId, { targetId })], viewerId, targetId, fx, (fx) => {
    fx.add({ type: "relations_changed", accountIds: [viewerId, targetId] });
    if (prior?.domain) fx.federate({ kind: "undo_block", accountId: viewerId, targetAccountId: targetId, blockUri: prior.uri ?? "" });
  });
}

export function blocksPage(db: DB, viewerId: string, page: Page): Promise<AccountPageRow[]> {
  return accountsByRelation(db, { table: blocks, id: blocks.id, owner: blocks.accountId, account: blocks.targetAccountId }, viewerId, page);
}
