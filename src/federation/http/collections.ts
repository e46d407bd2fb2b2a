// Queries behind the actor's collections (outbox, followers, following, featured, featured tags) and local lookups.
import { and, desc, eq, inArray, lt } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, featuredTags, follows, statusPins, statuses, tags } from "../../db/schema/index";
import type { AccountRow } from "../../db/schema/index";
import { statusRows } from "../../db/table-rows";
import { localAccountByUsername } from "../../queries/accounts/accounts";

/** The local actor a path names: a well-formed username, then the account. */
export async function localActor(db: DB, username: string): Promise<AccountRow | null> {
  return /^[A-Za-z0-9_.]{1,64}$/.test(username) ? localAccountByUsername(db, username) : null;
}

export async function publicStatusIds(db: DB, accountId: string, maxId: string | null, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, accountId), inArray(statuses.visibility, ["public", "unlisted"]), maxId ? lt(statuses.id, maxId) : undefined))
    .orderBy(desc(statuses.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

export async function pinnedStatusIds(db: DB, accountId: string): Promise<string[]> {
  const rows = await db
    .select({ id: statusPins.statusId })
    .from(statusPins)
    .innerJoin(statuses, eq(statuses.id, statusPins.statusId))
    .where(and(eq(statusPins.accountId, accountId), inArray(statuses.visibility, ["public", "unlisted"])))
    .orderBy(desc(statusPins.id));
  return rows.map((r) => r.id);
}

export async function followCollectionPage(db: DB, accountId: string, which: "followers" | "following", page: number, size = 40): Promise<string[]> {
  const own = which === "followers" ? follows.targetAccountId : follows.accountId;
  const other = which === "followers" ? follows.accountId : follows.targetAccountId;
  const rows = await db
    .select({ uri: accounts.uri })
    .from(follows)
    .innerJoin(accounts, eq(accounts.id, other))
    .where(eq(own, accountId))
    .orderBy(desc(follows.id))
    .limit(size)
    .offset(Math.max(0, page - 1) * size);
  return rows.map((r) => r.uri);
}

export async function featuredTagNames(db: DB, accountId: string): Promise<string[]> {
  const featured = db.select({ id: featuredTags.tagId }).from(featuredTags).where(eq(featuredTags.accountId, accountId));
  const rows = await db.select({ name: tags.name }).from(tags).where(inArray(tags.id, featured));
  return rows.map((r) => r.name);
}

export async function localStatus(db: DB, accountId: string, statusId: string) {
  const [s] = await statusRows(db, { where: and(eq(statuses.id, statusId), eq(statuses.accountId, accountId)), limit: 1 });
  return s ?? null;
}
