// Queries behind the public HTML pages (profile, status, a status's embed page and oEmbed). Rendering goes through
// renderStatus(es), which applies visibility again; these queries only pick candidates.
import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import type { DB } from "../db/client";
import { statuses } from "../db/schema/index";
import type { AccountRow } from "../db/schema";
import type { Config } from "../env";
import { type MastodonStatus, renderStatus } from "../entities/statuses/status";
import { parseId } from "../lib/text/ids";
import { localAccountByUsername } from "../queries/accounts/accounts";

/** A local, not suspended account by username (case-insensitive). */
export async function findLocalAccount(db: DB, username: string): Promise<AccountRow | null> {
  if (!/^[A-Za-z0-9_]{1,30}$/.test(username)) return null;
  const a = await localAccountByUsername(db, username);
  return a && !a.suspendedAt ? a : null;
}

/** Newest public and unlisted original posts (no reblogs) of an account. */
export async function recentPublicStatusIds(db: DB, accountId: string, limit = 20): Promise<string[]> {
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, accountId), inArray(statuses.visibility, ["public", "unlisted"]), isNull(statuses.reblogOfId)))
    .orderBy(desc(statuses.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** The status if it is an original public/unlisted post of `accountId`. */
export async function publicStatusOf(db: DB, accountId: string, statusId: string): Promise<string | null> {
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.id, statusId), eq(statuses.accountId, accountId), inArray(statuses.visibility, ["public", "unlisted"]), isNull(statuses.reblogOfId)))
    .limit(1);
  return rows[0]?.id ?? null;
}

/**
 * A local account's public or unlisted original post, rendered as nobody signed in sees it (the status page, its embed
 * page, oEmbed); null when `username` and `rawId` name none.
 */
export async function publicLocalStatus(db: DB, cfg: Config, username: string, rawId: string): Promise<MastodonStatus | null> {
  const id = parseId(rawId);
  if (!id) return null;
  const account = await findLocalAccount(db, username);
  if (!account || !(await publicStatusOf(db, account.id, id))) return null;
  return renderStatus(db, cfg, id, null);
}
