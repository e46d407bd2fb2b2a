// Muting: hides the account from timelines (and optionally its notifications), for a while or for good.
import { and, eq, gt, isNull, or } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, mutes } from "../../db/schema";
import { snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import type { MastodonRelationship } from "../../entities/accounts/relationship";
import type { AccountRow } from "../../db/schema";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { writeThenRelationship } from "./follows";
import type { Effects } from "../../effects/collector";
import { loadPair, notSelf } from "./relationships";

export interface MuteOptions {
  notifications: boolean;
  /** Seconds; 0 or absent = indefinitely. */
  duration: number;
}

export async function mute(db: DB, fx: Effects, viewerId: string, targetId: string, o: MuteOptions): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  await loadPair(db, viewerId, targetId);
  const now = Date.now();
  const expiresAt = o.duration > 0 ? now + o.duration * 1000 : null;
  return writeThenRelationship(
    db,
    [
      db
        .insert(mutes)
        .values({ id: snowflake(now), accountId: viewerId, targetAccountId: targetId, hideNotifications: o.notifications, expiresAt, createdAt: now })
        .onConflictDoUpdate({ target: [mutes.accountId, mutes.targetAccountId], set: { hideNotifications: o.notifications, expiresAt } }),
    ],
    viewerId,
    targetId,
    fx,
    (fx) => fx.add({ type: "unmerge_feed", accountId: viewerId, targetAccountId: targetId }, { type: "relations_changed", accountIds: [viewerId] }),
  );
}

export async function unmute(db: DB, fx: Effects, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  return writeThenRelationship(
    db,
    [db.delete(mutes).where(and(eq(mutes.accountId, viewerId), eq(mutes.targetAccountId, targetId)))],
    viewerId,
    targetId,
    fx,
    (fx) => fx.add({ type: "relations_changed", accountIds: [viewerId] }),
  );
}

export async function mutesPage(db: DB, viewerId: string, page: Page): Promise<{ cursor: string; account: AccountRow; expiresAt: number | null }[]> {
  const rows = await db
    .select({ cursor: mutes.id, account: accounts, expiresAt: mutes.expiresAt })
    .from(mutes)
    .innerJoin(accounts, eq(accounts.id, mutes.targetAccountId))
    .where(and(eq(mutes.accountId, viewerId), or(isNull(mutes.expiresAt), gt(mutes.expiresAt, Date.now())), cursorWhere(mutes.id, page)))
    .orderBy(cursorOrder(mutes.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}
