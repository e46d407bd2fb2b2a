// Who may see what: one place for every read path. In memory for rendered bundles (canSeeStatus), and as SQL
// conditions for list queries (statusReadableBy, hiddenAuthorsFor) so pages are filtered before they are cut.
import { and, eq, type Placeholder, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, blocks, follows, mentions, statuses } from "../db/schema";
import { padId } from "../lib/text/ids";
import type { RenderAccountRow } from "../db/schema";

/** What canSeeStatus reads of a rendered page's bundle (entities/statuses/status.ts StatusBundle). */
export interface ViewerFacts {
  viewer: { id: string | null; following: ReadonlySet<string>; blockedBy: ReadonlySet<string> };
  mentionIds: ReadonlyMap<string, ReadonlySet<string>>;
}

export function canSeeStatus(
  b: ViewerFacts,
  s: Pick<typeof statuses.$inferSelect, "id" | "accountId" | "visibility">,
  author: Pick<RenderAccountRow, "suspendedAt">,
): boolean {
  const v = b.viewer.id;
  if (author.suspendedAt) return false;
  if (v === s.accountId) return true;
  if (v && b.viewer.blockedBy.has(s.accountId)) return false;
  if (s.visibility === "public" || s.visibility === "unlisted") return true;
  if (!v) return false;
  const mentioned = b.mentionIds.get(s.id)?.has(v) ?? false;
  if (s.visibility === "direct") return mentioned;
  return mentioned || b.viewer.following.has(s.accountId);
}

/** A viewer in SQL: an account id goes in padded, as stored; a placeholder or an SQL expression (a column) as given. */
export const boundViewer = <T extends Placeholder | SQL>(v: string | T): string | T => (typeof v === "string" ? padId(v) : v);

/**
 * SQL: the status row `statuses` is visible to viewer `v` (null = signed out). Authors not suspended. `v` may be a
 * placeholder (a frozen statement's; its value goes in padded).
 */
export function statusReadableBy(v: string | Placeholder | null): SQL {
  const notSuspended = sql`NOT EXISTS (SELECT 1 FROM ${accounts} sa WHERE sa.id = ${statuses.accountId} AND sa.suspended_at IS NOT NULL)`;
  if (!v) return sql`(${statuses.visibility} IN ('public','unlisted') AND ${notSuspended})`;
  const pv = boundViewer(v);
  return sql`(${notSuspended} AND (${statuses.accountId} = ${pv} OR (
    NOT EXISTS (SELECT 1 FROM ${blocks} WHERE ${blocks.accountId} = ${statuses.accountId} AND ${blocks.targetAccountId} = ${pv})
    AND (
      ${statuses.visibility} IN ('public','unlisted')
      OR EXISTS (SELECT 1 FROM ${mentions} WHERE ${mentions.statusId} = ${statuses.id} AND ${mentions.accountId} = ${pv})
      OR (${statuses.visibility} = 'private' AND EXISTS (SELECT 1 FROM ${follows} WHERE ${follows.accountId} = ${pv} AND ${follows.targetAccountId} = ${statuses.accountId}))
    ))))`;
}

/**
 * SQL: the author column `authorCol` is someone viewer `v` has hidden (blocked, muted, domain-blocked) or who
 * blocks `v`. Used by timelines (home, public, tag, list) to drop such statuses at read time.
 */
// CROSS JOIN: the viewer's domain blocks drive (usually none: no row read), not the author's row on every entry.
// Written as text (the names drizzle would write for blocks, mutes, account_domain_blocks and accounts): every page
// of every timeline builds it once or twice, and each table or column reference was one more piece for drizzle to
// escape and join on each call (test/unit/visibility-sql.test.ts checks the text is the same).
export function hiddenAuthorFor(v: string | SQL, authorCol: SQL | typeof statuses.accountId, now: SQL | number = Date.now()): SQL {
  const pv = boundViewer(v);
  return sql`(EXISTS (SELECT 1 FROM "blocks" WHERE ("blocks"."account_id" = ${pv} AND "blocks"."target_account_id" = ${authorCol}) OR ("blocks"."account_id" = ${authorCol} AND "blocks"."target_account_id" = ${pv}))
    OR EXISTS (SELECT 1 FROM "mutes" WHERE "mutes"."account_id" = ${pv} AND "mutes"."target_account_id" = ${authorCol} AND ("mutes"."expires_at" IS NULL OR "mutes"."expires_at" > ${now}))
    OR EXISTS (SELECT 1 FROM "account_domain_blocks" CROSS JOIN "accounts" da ON da.id = ${authorCol} WHERE "account_domain_blocks"."account_id" = ${pv} AND "account_domain_blocks"."domain" = da.domain))`;
}

/**
 * Whether `accountId` (local or remote) may read the status: the rule REST applies, used for what other servers send
 * too (a Like, Announce or reply from an actor who may not see a private status is not taken).
 */
export async function accountCanRead(db: DB, accountId: string, statusId: string): Promise<boolean> {
  const rows = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.id, statusId), statusReadableBy(accountId)))
    .limit(1);
  return rows.length > 0;
}
