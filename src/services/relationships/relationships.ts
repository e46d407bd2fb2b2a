// The state between the viewer and one target, loaded in one batch before an action decides what to write.
import { and, eq, or } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, blocks, followRequests, follows } from "../../db/schema";
import { forbidden, notFound } from "../../lib/http/errors";
import type { AccountRow } from "../../db/schema";
import { accountRows } from "../../db/table-rows";

export type FollowRow = typeof follows.$inferSelect;
export type FollowRequestRow = typeof followRequests.$inferSelect;

export interface Pair {
  target: AccountRow;
  follow: FollowRow | null;
  request: FollowRequestRow | null;
  blocking: boolean;
  blockedBy: boolean;
}

/** Target account plus the viewer's follow, request and blocks either way; 404 when the target is unknown. */
export async function loadPair(db: DB, viewerId: string, targetId: string): Promise<Pair> {
  const [t, f, r, b] = await db.batch([
    accountRows(db, { where: eq(accounts.id, targetId), limit: 1 }),
    db
      .select()
      .from(follows)
      .where(and(eq(follows.accountId, viewerId), eq(follows.targetAccountId, targetId)))
      .limit(1),
    db
      .select()
      .from(followRequests)
      .where(and(eq(followRequests.accountId, viewerId), eq(followRequests.targetAccountId, targetId)))
      .limit(1),
    db
      .select({ accountId: blocks.accountId })
      .from(blocks)
      .where(
        or(
          and(eq(blocks.accountId, viewerId), eq(blocks.targetAccountId, targetId)),
          and(eq(blocks.accountId, targetId), eq(blocks.targetAccountId, viewerId)),
        ),
      ),
  ]);
  if (!t[0]) throw notFound();
  return {
    target: t[0],
    follow: f[0] ?? null,
    request: r[0] ?? null,
    blocking: b.some((x) => x.accountId === viewerId),
    blockedBy: b.some((x) => x.accountId === targetId),
  };
}

/** Actions on oneself are refused like Mastodon does. */
export function notSelf(viewerId: string, targetId: string): void {
  if (viewerId === targetId) throw forbidden();
}
