// Following: follow (or request when the target is locked or remote), unfollow, remove a follower, authorize and
// reject requests. Each action's writes, its notification and the resulting relationship go in ONE batch; feed
// merging happens later on the JOBS queue.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { batchable, type DB } from "../db/client";
import { accounts, followRequests, follows } from "../db/schema";
import { forbidden, notFound } from "../lib/errors";
import { padId, snowflake } from "../lib/ids";
import type { Page } from "../lib/pagination";
import { relationshipQuery, toRelationships, type MastodonRelationship } from "../entities/relationship";
import { accountsByRelation, type AccountPageRow } from "./account-queries";
import type { JobMessage } from "./jobs";
import { notificationStatement, retractNotificationStatement } from "./notifications";
import { enqueue, loadPair, notSelf } from "./relationships";
import { newActivityUri, type Federator } from "../federation/enqueue";

export interface FollowOptions {
  reblogs?: boolean;
  notify?: boolean;
  languages?: string[] | null;
}

type Jobs = Queue<JobMessage>;

/** A raw statement that can join a batch. */
export const exec = (db: DB, q: SQL) => batchable(db, db.run(q));

/** Runs `stmts` and then reads the relationship with `targetId`, in one round trip. */
export async function writeThenRelationship(db: DB, stmts: BatchItem<"sqlite">[], viewerId: string, targetId: string): Promise<MastodonRelationship> {
  const res = (await db.batch([...stmts, relationshipQuery(db, viewerId, [targetId])] as unknown as [BatchItem<"sqlite">])) as unknown[];
  const rel = toRelationships(res[res.length - 1] as Parameters<typeof toRelationships>[0], [targetId])[0];
  if (!rel) throw notFound();
  return rel;
}

function optionValues(opts: FollowOptions) {
  const set: { showReblogs?: boolean; notify?: boolean; languages?: string[] | null } = {};
  if (opts.reblogs !== undefined) set.showReblogs = opts.reblogs;
  if (opts.notify !== undefined) set.notify = opts.notify;
  if (opts.languages !== undefined) set.languages = opts.languages;
  return set;
}

export async function follow(db: DB, jobs: Jobs, viewerId: string, targetId: string, opts: FollowOptions, fed?: Federator): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  if (p.target.suspendedAt) throw notFound();
  if (p.blocking || p.blockedBy) throw forbidden();
  const set = optionValues(opts);
  const stmts: BatchItem<"sqlite">[] = [];
  const now = Date.now();
  let merge = false;
  const followUri = fed && p.target.domain && !p.follow && !p.request ? newActivityUri(fed.origin) : null;
  if (p.follow) {
    // A repeated follow updates the options of the existing one (spec state table).
    if (Object.keys(set).length) stmts.push(db.update(follows).set(set).where(eq(follows.id, p.follow.id)));
  } else if (p.request) {
    if (Object.keys(set).length) stmts.push(db.update(followRequests).set(set).where(eq(followRequests.id, p.request.id)));
  } else {
    const row = {
      id: snowflake(now),
      accountId: viewerId,
      targetAccountId: targetId,
      showReblogs: opts.reblogs ?? true,
      notify: opts.notify ?? false,
      languages: opts.languages ?? null,
      uri: followUri,
      createdAt: now,
    };
    // Remote accounts are followed through a request until their server accepts (delivery: federation work).
    if (p.target.locked || p.target.domain) {
      stmts.push(db.insert(followRequests).values(row).onConflictDoNothing());
      stmts.push(notificationStatement(db, { recipientId: targetId, fromAccountId: viewerId, type: "follow_request", activityId: row.id }));
    } else {
      stmts.push(db.insert(follows).values(row).onConflictDoNothing());
      stmts.push(notificationStatement(db, { recipientId: targetId, fromAccountId: viewerId, type: "follow", activityId: row.id }));
      merge = true;
    }
  }
  const rel = await writeThenRelationship(db, stmts, viewerId, targetId);
  if (merge) await enqueue(jobs, [{ type: "merge_feed", accountId: viewerId, targetAccountId: targetId }]);
  if (fed && followUri) await fed.send({ kind: "follow", accountId: viewerId, targetAccountId: targetId, followUri });
  return rel;
}

/** Removing a follow also takes the account out of the follower's lists (Mastodon ties list members to follows). */
function leaveListsStatement(db: DB, ownerId: string, memberId: string) {
  return db.run(
    sql`DELETE FROM list_accounts WHERE account_id = ${padId(memberId)} AND list_id IN (SELECT id FROM lists WHERE account_id = ${padId(ownerId)})`,
  );
}

/** Statements that end every follow and request between two accounts, both ways (block). */
export function severStatements(db: DB, a: string, b: string): BatchItem<"sqlite">[] {
  const pa = padId(a);
  const pb = padId(b);
  return [
    exec(db, sql`DELETE FROM notifications WHERE type IN ('follow','follow_request')
      AND ((account_id = ${pa} AND from_account_id = ${pb}) OR (account_id = ${pb} AND from_account_id = ${pa}))`),
    exec(db, sql`DELETE FROM follows WHERE (account_id = ${pa} AND target_account_id = ${pb}) OR (account_id = ${pb} AND target_account_id = ${pa})`),
    exec(db, sql`DELETE FROM follow_requests WHERE (account_id = ${pa} AND target_account_id = ${pb}) OR (account_id = ${pb} AND target_account_id = ${pa})`),
    leaveListsStatement(db, a, b),
    leaveListsStatement(db, b, a),
  ];
}

export async function unfollow(db: DB, jobs: Jobs, viewerId: string, targetId: string, fed?: Federator): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  const stmts: BatchItem<"sqlite">[] = [];
  if (p.follow) {
    stmts.push(db.delete(follows).where(eq(follows.id, p.follow.id)));
    stmts.push(retractNotificationStatement(db, "follow", p.follow.id));
    stmts.push(leaveListsStatement(db, viewerId, targetId));
  }
  if (p.request) {
    stmts.push(db.delete(followRequests).where(eq(followRequests.id, p.request.id)));
    stmts.push(retractNotificationStatement(db, "follow_request", p.request.id));
  }
  const rel = await writeThenRelationship(db, stmts, viewerId, targetId);
  if (p.follow) await enqueue(jobs, [{ type: "unmerge_feed", accountId: viewerId, targetAccountId: targetId }]);
  if (fed && p.target.domain && (p.follow || p.request)) await fed.send({ kind: "undo_follow", accountId: viewerId, targetAccountId: targetId, followUri: p.follow?.uri ?? p.request?.uri ?? "" });
  return rel;
}

/** The viewer makes `followerId` stop following them. */
export async function removeFromFollowers(db: DB, jobs: Jobs, viewerId: string, followerId: string, fed?: Federator): Promise<MastodonRelationship> {
  notSelf(viewerId, followerId);
  const [t, f] = await db.batch([
    db.select({ id: accounts.id, domain: accounts.domain }).from(accounts).where(eq(accounts.id, followerId)).limit(1),
    db.select({ id: follows.id, uri: follows.uri }).from(follows).where(and(eq(follows.accountId, followerId), eq(follows.targetAccountId, viewerId))).limit(1),
  ]);
  if (!t[0]) throw notFound();
  const stmts: BatchItem<"sqlite">[] = [];
  if (f[0]) {
    stmts.push(db.delete(follows).where(eq(follows.id, f[0].id)));
    stmts.push(retractNotificationStatement(db, "follow", f[0].id));
    stmts.push(leaveListsStatement(db, followerId, viewerId));
  }
  const rel = await writeThenRelationship(db, stmts, viewerId, followerId);
  if (f[0]) await enqueue(jobs, [{ type: "unmerge_feed", accountId: followerId, targetAccountId: viewerId }]);
  if (fed && f[0] && t[0].domain) await fed.send({ kind: "reject_follow", accountId: viewerId, followerId, followUri: f[0].uri ?? "" });
  return rel;
}

// ---- follow requests (the viewer is the target) ----

async function pendingRequest(db: DB, viewerId: string, requesterId: string) {
  const rows = await db
    .select()
    .from(followRequests)
    .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, viewerId)))
    .limit(1);
  if (!rows[0]) throw notFound();
  return rows[0];
}

export async function authorizeRequest(db: DB, jobs: Jobs, viewerId: string, requesterId: string, fed?: Federator): Promise<MastodonRelationship> {
  const r = await pendingRequest(db, viewerId, requesterId);
  const now = Date.now();
  const rel = await writeThenRelationship(
    db,
    [
      db
        .insert(follows)
        .values({
          id: snowflake(now),
          accountId: requesterId,
          targetAccountId: viewerId,
          showReblogs: r.showReblogs,
          notify: r.notify,
          languages: r.languages,
          uri: r.uri,
          createdAt: now,
        })
        .onConflictDoNothing(),
      db.delete(followRequests).where(eq(followRequests.id, r.id)),
      retractNotificationStatement(db, "follow_request", r.id),
    ],
    viewerId,
    requesterId,
  );
  await enqueue(jobs, [{ type: "merge_feed", accountId: requesterId, targetAccountId: viewerId }]);
  // Only requests that came from another server carry the remote Follow's id.
  if (fed && r.uri) await fed.send({ kind: "accept_follow", accountId: viewerId, followerId: requesterId, followUri: r.uri });
  return rel;
}

export async function rejectRequest(db: DB, viewerId: string, requesterId: string, fed?: Federator): Promise<MastodonRelationship> {
  const r = await pendingRequest(db, viewerId, requesterId);
  const rel = await writeThenRelationship(
    db,
    [db.delete(followRequests).where(eq(followRequests.id, r.id)), retractNotificationStatement(db, "follow_request", r.id)],
    viewerId,
    requesterId,
  );
  if (fed && r.uri) await fed.send({ kind: "reject_follow", accountId: viewerId, followerId: requesterId, followUri: r.uri });
  return rel;
}

/**
 * Statements that authorize every pending request to `accountId` (the account was unlocked). The last one returns
 * the requesters, for merge_feed jobs.
 */
export function authorizeAllStatements(db: DB, accountId: string) {
  const p = padId(accountId);
  return [
    exec(db, sql`INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, languages, uri, created_at)
      SELECT id, account_id, target_account_id, show_reblogs, notify, languages, uri, ${Date.now()} FROM follow_requests WHERE target_account_id = ${p}`),
    exec(db, sql`DELETE FROM notifications WHERE account_id = ${p} AND type = 'follow_request'`),
    db.delete(followRequests).where(eq(followRequests.targetAccountId, accountId)).returning({ accountId: followRequests.accountId, uri: followRequests.uri }),
  ] as const;
}

export function followRequestsPage(db: DB, viewerId: string, page: Page): Promise<AccountPageRow[]> {
  const rel = { table: followRequests, id: followRequests.id, owner: followRequests.targetAccountId, account: followRequests.accountId };
  return accountsByRelation(db, rel, viewerId, page);
}
