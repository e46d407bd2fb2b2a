// Blocking ends every follow and request between the two accounts, both ways, in the same batch as the block.
import { and, eq, or } from "drizzle-orm";
import type { DB } from "../db/client";
import { accountPins, accounts, blocks } from "../db/schema";
import { snowflake } from "../lib/ids";
import type { Page } from "../lib/pagination";
import type { MastodonRelationship } from "../entities/relationship";
import { accountsByRelation, type AccountPageRow } from "./account-queries";
import { severStatements, writeThenRelationship } from "./follows";
import type { JobMessage } from "./jobs";
import { enqueue, loadPair, notSelf } from "./relationships";
import { newActivityUri, type Federator } from "../federation/enqueue";

export async function block(db: DB, jobs: Queue<JobMessage>, viewerId: string, targetId: string, fed?: Federator): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  const blockUri = fed && p.target.domain && !p.blocking ? newActivityUri(fed.origin) : null;
  const now = Date.now();
  const rel = await writeThenRelationship(
    db,
    [
      db.insert(blocks).values({ id: snowflake(now), accountId: viewerId, targetAccountId: targetId, uri: blockUri, createdAt: now }).onConflictDoNothing(),
      ...severStatements(db, viewerId, targetId),
      db
        .delete(accountPins)
        .where(
          or(
            and(eq(accountPins.accountId, viewerId), eq(accountPins.targetAccountId, targetId)),
            and(eq(accountPins.accountId, targetId), eq(accountPins.targetAccountId, viewerId)),
          ),
        ),
    ],
    viewerId,
    targetId,
  );
  await enqueue(jobs, [
    { type: "unmerge_feed", accountId: viewerId, targetAccountId: targetId },
    { type: "unmerge_feed", accountId: targetId, targetAccountId: viewerId },
  ]);
  if (fed && blockUri) await fed.send({ kind: "block", accountId: viewerId, targetAccountId: targetId, blockUri });
  return rel;
}

export async function unblock(db: DB, viewerId: string, targetId: string, fed?: Federator): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const mine = and(eq(blocks.accountId, viewerId), eq(blocks.targetAccountId, targetId));
  const [prior] = fed ? await db.select({ uri: blocks.uri, domain: accounts.domain }).from(blocks).innerJoin(accounts, eq(accounts.id, blocks.targetAccountId)).where(mine).limit(1) : [];
  const rel = await writeThenRelationship(db, [db.delete(blocks).where(mine)], viewerId, targetId);
  if (fed && prior?.domain) await fed.send({ kind: "undo_block", accountId: viewerId, targetAccountId: targetId, blockUri: prior.uri ?? "" });
  return rel;
}

export function blocksPage(db: DB, viewerId: string, page: Page): Promise<AccountPageRow[]> {
  return accountsByRelation(db, { table: blocks, id: blocks.id, owner: blocks.accountId, account: blocks.targetAccountId }, viewerId, page);
}
