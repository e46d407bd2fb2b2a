// Relationship JSON (viewer → each target). ONE statement answers a whole id list: every flag is a correlated
// subquery or a left join on accounts, so the query can also ride along in the batch of the action that changed it.
import { and, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { accountDomainBlocks, accountNotes, accountPins, accounts, followRequests, follows, mutes } from "../../db/schema/index";
import { padId } from "../../lib/text/ids";
import { isoTime } from "../urls";

export interface MastodonRelationship {
  id: string;
  following: boolean;
  showing_reblogs: boolean;
  notifying: boolean;
  languages: string[] | null;
  followed_by: boolean;
  blocking: boolean;
  blocked_by: boolean;
  muting: boolean;
  muting_notifications: boolean;
  muting_expires_at: string | null;
  requested: boolean;
  requested_by: boolean;
  domain_blocking: boolean;
  endorsed: boolean;
  note: string;
}

/**
 * The query for `targetIds` seen by `viewerId`; unknown ids (and suspended ones unless asked) yield no row.
 * Every column has its own alias: D1 batch results come back as objects keyed by column name, so two columns
 * both called `id` (accounts, follows) would collapse into one.
 */
export function relationshipQuery(db: DB, viewerId: string, targetIds: string[], withSuspended = true) {
  const v = padId(viewerId);
  const now = Date.now();
  const flag = (q: ReturnType<typeof sql>, alias: string) => sql<number>`EXISTS (${q})`.mapWith(Number).as(alias);
  return db
    .select({
      id: sql<string>`${accounts.id}`.mapWith(accounts.id).as("rel_id"),
      followId: sql<string | null>`${follows.id}`.mapWith(follows.id).as("rel_follow_id"),
      followReblogs: sql<boolean | null>`${follows.showReblogs}`.mapWith(follows.showReblogs).as("rel_follow_reblogs"),
      followNotify: sql<boolean | null>`${follows.notify}`.mapWith(follows.notify).as("rel_follow_notify"),
      followLanguages: sql<string[] | null>`${follows.languages}`.mapWith(follows.languages).as("rel_follow_languages"),
      requestId: sql<string | null>`${followRequests.id}`.mapWith(followRequests.id).as("rel_request_id"),
      requestReblogs: sql<boolean | null>`${followRequests.showReblogs}`.mapWith(followRequests.showReblogs).as("rel_request_reblogs"),
      requestNotify: sql<boolean | null>`${followRequests.notify}`.mapWith(followRequests.notify).as("rel_request_notify"),
      requestLanguages: sql<string[] | null>`${followRequests.languages}`.mapWith(followRequests.languages).as("rel_request_languages"),
      muteHide: sql<boolean | null>`${mutes.hideNotifications}`.mapWith(mutes.hideNotifications).as("rel_mute_hide"),
      muteExpires: sql<number | null>`${mutes.expiresAt}`.mapWith(mutes.expiresAt).as("rel_mute_expires"),
      muteTarget: sql<string | null>`${mutes.targetAccountId}`.mapWith(mutes.targetAccountId).as("rel_mute_target"),
      followedBy: flag(sql`SELECT 1 FROM follows fb WHERE fb.account_id = ${accounts.id} AND fb.target_account_id = ${v}`, "rel_followed_by"),
      blocking: flag(sql`SELECT 1 FROM blocks b1 WHERE b1.account_id = ${v} AND b1.target_account_id = ${accounts.id}`, "rel_blocking"),
      blockedBy: flag(sql`SELECT 1 FROM blocks b2 WHERE b2.account_id = ${accounts.id} AND b2.target_account_id = ${v}`, "rel_blocked_by"),
      requestedBy: flag(sql`SELECT 1 FROM follow_requests rb WHERE rb.account_id = ${accounts.id} AND rb.target_account_id = ${v}`, "rel_requested_by"),
      domainBlocking: flag(
        sql`SELECT 1 FROM ${accountDomainBlocks} WHERE ${accountDomainBlocks.accountId} = ${v} AND ${accountDomainBlocks.domain} = ${accounts.domain}`,
        "rel_domain_blocking",
      ),
      endorsed: flag(
        sql`SELECT 1 FROM ${accountPins} WHERE ${accountPins.accountId} = ${v} AND ${accountPins.targetAccountId} = ${accounts.id}`,
        "rel_endorsed",
      ),
      note: sql<
        string | null
      >`(SELECT ${accountNotes.comment} FROM ${accountNotes} WHERE ${accountNotes.accountId} = ${v} AND ${accountNotes.targetAccountId} = ${accounts.id})`.as(
        "rel_note",
      ),
    })
    .from(accounts)
    .leftJoin(follows, and(eq(follows.accountId, viewerId), eq(follows.targetAccountId, accounts.id)))
    .leftJoin(followRequests, and(eq(followRequests.accountId, viewerId), eq(followRequests.targetAccountId, accounts.id)))
    .leftJoin(mutes, and(eq(mutes.accountId, viewerId), eq(mutes.targetAccountId, accounts.id), or(isNull(mutes.expiresAt), gt(mutes.expiresAt, now))))
    .where(withSuspended ? sql`${accounts.id} IN ${idList(targetIds)}` : sql`${accounts.id} IN ${idList(targetIds)} AND ${accounts.suspendedAt} IS NULL`);
}

export type RelationshipRow = Awaited<ReturnType<typeof relationshipQuery>>[number];

/** Rows → entities in the order of `targetIds` (duplicates collapsed, missing ids skipped). */
export function toRelationships(rows: RelationshipRow[], targetIds: string[]): MastodonRelationship[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const seen = new Set<string>();
  const out: MastodonRelationship[] = [];
  for (const id of targetIds) {
    const r = byId.get(id);
    if (!r || seen.has(id)) continue;
    seen.add(id);
    out.push(renderRelationshipRow(r));
  }
  return out;
}

function renderRelationshipRow(r: RelationshipRow): MastodonRelationship {
  const following = r.followId != null;
  const requested = !following && r.requestId != null;
  const muting = r.muteTarget != null;
  return {
    id: r.id,
    following,
    showing_reblogs: following ? !!r.followReblogs : requested ? !!r.requestReblogs : false,
    notifying: following ? !!r.followNotify : requested ? !!r.requestNotify : false,
    languages: following ? (r.followLanguages ?? null) : requested ? (r.requestLanguages ?? null) : null,
    followed_by: !!r.followedBy,
    blocking: !!r.blocking,
    blocked_by: !!r.blockedBy,
    muting,
    muting_notifications: muting && !!r.muteHide,
    muting_expires_at: muting ? isoTime(r.muteExpires) : null,
    requested,
    requested_by: !!r.requestedBy,
    domain_blocking: !!r.domainBlocking,
    endorsed: !!r.endorsed,
    note: r.note ?? "",
  };
}

/** Relationships of `viewerId` with `targetIds`, in one round trip. */
export async function renderRelationships(db: DB, viewerId: string, targetIds: string[], withSuspended = true): Promise<MastodonRelationship[]> {
  if (targetIds.length === 0) return [];
  const [rows] = await db.batch([relationshipQuery(db, viewerId, targetIds, withSuspended)]);
  return toRelationships(rows, targetIds);
}
