// Following: follow (or request when the target is locked or remote), unfollow, remove a follower, authorize and
// reject requests. Each action's writes, its notification and the resulting relationship go in ONE batch; feed
// merging and federation are effects. The state changes that REST and ActivityPub share are written once here: a
// follow or request beginning (`beginFollow`: follow, Follow received), a request becoming a follow (`acceptRequest`:
// authorize, Accept received, profile unlocked) and a follow ending (`endFollow`: unfollow, remove follower, Reject
// received, Undo{Follow} received).
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { batchable, type DB } from "../../db/client";
import { accounts, followRequests, follows } from "../../db/schema";
import { isUniqueViolation } from "../../db/unique";
import { forbidden, notFound } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { relationshipQuery, toRelationships, type MastodonRelationship } from "../../entities/accounts/relationship";
import { accountsByRelation, type AccountPageRow } from "../../queries/accounts/accounts";
import { newActivityUri, type Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { NotifyEffect } from "../../effects/types";
import { notificationWrite, retractNotificationStatement } from "../notifications/notifications";
import { loadPair, notSelf, type FollowRequestRow, type FollowRow } from "./relationships";

export interface FollowOptions {
  reblogs?: boolean;
  notify?: boolean;
  languages?: string[] | null;
}

/** A raw statement that can join a batch. */
export const exec = (db: DB, q: SQL) => batchable(db, db.run(q));

/**
 * Runs `stmts` and then reads the relationship with `targetId`, in one round trip. `fx` and `record`: the effects that
 * follow from the statements, committed with them (src/effects/commit.ts).
 */
export async function writeThenRelationship(
  db: DB,
  stmts: BatchItem<"sqlite">[],
  viewerId: string,
  targetId: string,
  fx?: Effects,
  record?: (fx: Effects) => void,
): Promise<MastodonRelationship> {
  const all = [...stmts, relationshipQuery(db, viewerId, [targetId])] as unknown as [BatchItem<"sqlite">];
  const res = (fx && record ? await commit(db, fx, all, record) : await db.batch(all)) as unknown[];
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

export async function follow(
  db: DB,
  fx: Effects,
  viewerId: string,
  targetId: string,
  opts: FollowOptions,
  viewer: { silenced?: boolean } = {},
): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  if (p.target.suspendedAt) throw notFound();
  if (p.blocking || p.blockedBy) throw forbidden();
  // Mastodon's AccountsController#follow: the answer shows the follow as made (`following`, with its options) when the
  // target is believed to accept at once (not locked, the follower not silenced), although a remote one stays a
  // request until its server's Accept, so a client shows "Following" at once.
  const believed = (rel: MastodonRelationship): MastodonRelationship =>
    rel.requested && !p.target.locked && !viewer.silenced ? { ...rel, following: true, requested: false } : rel;
  const set = optionValues(opts);
  if (p.follow || p.request) {
    // A repeated follow updates the options of the existing one (spec state table).
    const stmts: BatchItem<"sqlite">[] = [];
    if (p.follow && Object.keys(set).length) stmts.push(db.update(follows).set(set).where(eq(follows.id, p.follow.id)));
    if (!p.follow && p.request && Object.keys(set).length) stmts.push(db.update(followRequests).set(set).where(eq(followRequests.id, p.request.id)));
    return believed(await writeThenRelationship(db, stmts, viewerId, targetId));
  }
  const followUri = p.target.domain ? newActivityUri(fx.origin) : null;
  // Remote accounts are followed through a request until their server accepts; a silenced follower's follow is a
  // request too (Mastodon's FollowService).
  const change = beginFollow(db, {
    followerId: viewerId,
    targetId,
    pending: !!(p.target.locked || p.target.domain || viewer.silenced),
    uri: followUri,
    opts,
    followerLocal: true,
  });
  let rel: MastodonRelationship;
  try {
    rel = await writeThenRelationship(db, change.stmts, viewerId, targetId, fx, (fx) => {
      change.effects(fx);
      if (followUri) fx.federate({ kind: "follow", accountId: viewerId, targetAccountId: targetId, followUri });
    });
  } catch (e) {
    // A parallel follow got there first: nothing of this one was written; answer with the relationship as it is.
    if (!isUniqueViolation(e, "follows") && !isUniqueViolation(e, "follow_requests")) throw e;
    return believed(await writeThenRelationship(db, [], viewerId, targetId));
  }
  return believed(rel);
}

/**
 * A follow, or a request when `pending` (the target is locked or remote, or the follower is silenced), begins: the
 * row and its notification, for the caller's batch (a parallel copy makes the batch fail on the unique pair, writing
 * nothing); once it committed, the notification is streamed and pushed, and a local follower's home feed gets the
 * target's recent posts. REST's follow and a Follow received both begin a follow here; federation is the caller's
 * business (a Follow sent, or an Accept).
 */
export function beginFollow(
  db: DB,
  f: { followerId: string; targetId: string; pending: boolean; uri: string | null; opts?: FollowOptions; followerLocal: boolean },
): Change {
  const now = Date.now();
  const row = {
    id: snowflake(now),
    accountId: f.followerId,
    targetAccountId: f.targetId,
    showReblogs: f.opts?.reblogs ?? true,
    notify: f.opts?.notify ?? false,
    languages: f.opts?.languages ?? null,
    uri: f.uri,
    createdAt: now,
  };
  const type = f.pending ? "follow_request" : "follow";
  const note = notificationWrite(db, { recipientId: f.targetId, fromAccountId: f.followerId, type, activityId: row.id });
  return {
    stmts: [f.pending ? db.insert(followRequests).values(row) : db.insert(follows).values(row), note.statement],
    notify: [note.effect],
    effects: (fx) => {
      fx.add(note.effect);
      if (!f.pending && f.followerLocal) fx.add({ type: "merge_feed", accountId: f.followerId, targetAccountId: f.targetId });
    },
  };
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
    exec(
      db,
      sql`DELETE FROM notifications WHERE type IN ('follow','follow_request')
      AND ((account_id = ${pa} AND from_account_id = ${pb}) OR (account_id = ${pb} AND from_account_id = ${pa}))`,
    ),
    exec(db, sql`DELETE FROM follows WHERE (account_id = ${pa} AND target_account_id = ${pb}) OR (account_id = ${pb} AND target_account_id = ${pa})`),
    exec(db, sql`DELETE FROM follow_requests WHERE (account_id = ${pa} AND target_account_id = ${pb}) OR (account_id = ${pb} AND target_account_id = ${pa})`),
    leaveListsStatement(db, a, b),
    leaveListsStatement(db, b, a),
  ];
}

/**
 * A state change: the statements for the action's batch, and the effects to record once that batch committed
 * (`effects(fx)`, called by whoever ran the batch). `notify`: the `notify` effects among them, for a batch that reads
 * ahead what they will read (an inbox handler's last batch: src/federation/inbox/handlers/context.ts withFinish).
 */
export interface Change {
  stmts: BatchItem<"sqlite">[];
  notify?: readonly NotifyEffect[];
  effects: (fx: Effects) => void;
}

/**
 * A follow and/or a pending request from `followerId` to `targetId` end (unfollow, remove follower, Reject or
 * Undo{Follow} received): the rows, their notifications and the follower's list memberships go, and the target's
 * posts leave the follower's home feed. Federation is the caller's business (it differs by who ended it).
 */
export function endFollow(
  db: DB,
  followerId: string,
  targetId: string,
  rows: { follow?: Pick<FollowRow, "id"> | null; request?: Pick<FollowRequestRow, "id"> | null },
): Change {
  const stmts: BatchItem<"sqlite">[] = [];
  if (rows.follow) {
    stmts.push(db.delete(follows).where(eq(follows.id, rows.follow.id)));
    stmts.push(retractNotificationStatement(db, targetId, "follow", rows.follow.id));
    stmts.push(leaveListsStatement(db, followerId, targetId) as unknown as BatchItem<"sqlite">);
  }
  if (rows.request) {
    stmts.push(db.delete(followRequests).where(eq(followRequests.id, rows.request.id)));
    stmts.push(retractNotificationStatement(db, targetId, "follow_request", rows.request.id));
  }
  const hadFollow = !!rows.follow;
  return {
    stmts,
    effects: (fx) => {
      if (hadFollow) fx.add({ type: "unmerge_feed", accountId: followerId, targetAccountId: targetId });
    },
  };
}

/**
 * A pending request becomes a follow (authorized here, Accept received from the followee's server, or the followee
 * unlocked their account). The followee's server is told with an Accept when the follower is remote (its request
 * carries the remote Follow's id) and `acceptRemote` says this server is the followee's.
 */
export function acceptRequest(db: DB, req: FollowRequestRow, acceptRemote: boolean): Change {
  const now = Date.now();
  return {
    stmts: [
      exec(
        db,
        sql`INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, languages, uri, created_at)
        SELECT ${padId(snowflake(now))}, account_id, target_account_id, show_reblogs, notify, languages, uri, ${now}
        FROM follow_requests WHERE id = ${padId(req.id)}`,
      ),
      db.delete(followRequests).where(eq(followRequests.id, req.id)),
      retractNotificationStatement(db, req.targetAccountId, "follow_request", req.id),
    ],
    effects: (fx) => {
      fx.add({ type: "merge_feed", accountId: req.accountId, targetAccountId: req.targetAccountId });
      if (acceptRemote && req.uri) fx.federate({ kind: "accept_follow", accountId: req.targetAccountId, followerId: req.accountId, followUri: req.uri });
    },
  };
}

export async function unfollow(db: DB, fx: Effects, viewerId: string, targetId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, targetId);
  const p = await loadPair(db, viewerId, targetId);
  const change = endFollow(db, viewerId, targetId, p);
  return writeThenRelationship(db, change.stmts, viewerId, targetId, fx, (fx) => {
    change.effects(fx);
    if (p.target.domain && (p.follow || p.request))
      fx.federate({ kind: "undo_follow", accountId: viewerId, targetAccountId: targetId, followUri: p.follow?.uri ?? p.request?.uri ?? "" });
  });
}

/** The viewer makes `followerId` stop following them. */
export async function removeFromFollowers(db: DB, fx: Effects, viewerId: string, followerId: string): Promise<MastodonRelationship> {
  notSelf(viewerId, followerId);
  const [t, f] = await db.batch([
    db.select({ id: accounts.id, domain: accounts.domain }).from(accounts).where(eq(accounts.id, followerId)).limit(1),
    db
      .select({ id: follows.id, uri: follows.uri })
      .from(follows)
      .where(and(eq(follows.accountId, followerId), eq(follows.targetAccountId, viewerId)))
      .limit(1),
  ]);
  if (!t[0]) throw notFound();
  const change = endFollow(db, followerId, viewerId, { follow: f[0] });
  const follower = t[0];
  return writeThenRelationship(db, change.stmts, viewerId, followerId, fx, (fx) => {
    change.effects(fx);
    if (f[0] && follower.domain) fx.federate({ kind: "reject_follow", accountId: viewerId, followerId, followUri: f[0].uri ?? "" });
  });
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

export async function authorizeRequest(db: DB, fx: Effects, viewerId: string, requesterId: string): Promise<MastodonRelationship> {
  const r = await pendingRequest(db, viewerId, requesterId);
  const change = acceptRequest(db, r, true);
  return writeThenRelationship(db, change.stmts, viewerId, requesterId, fx, change.effects);
}

export async function rejectRequest(db: DB, fx: Effects, viewerId: string, requesterId: string): Promise<MastodonRelationship> {
  const r = await pendingRequest(db, viewerId, requesterId);
  const change = endFollow(db, requesterId, viewerId, { request: r });
  return writeThenRelationship(db, change.stmts, viewerId, requesterId, fx, (fx) => {
    change.effects(fx);
    // Only requests that came from another server carry the remote Follow's id.
    if (r.uri) fx.federate({ kind: "reject_follow", accountId: viewerId, followerId: requesterId, followUri: r.uri });
  });
}

/** Every pending request to `accountId` (the account is being unlocked), at most this many at once. */
export const MAX_AUTHORIZE_ALL = 200;
export function pendingRequestsTo(db: DB, accountId: string) {
  return db.select().from(followRequests).where(eq(followRequests.targetAccountId, accountId)).limit(MAX_AUTHORIZE_ALL);
}

export function followRequestsPage(db: DB, viewerId: string, page: Page): Promise<AccountPageRow[]> {
  const rel = { table: followRequests, id: followRequests.id, owner: followRequests.targetAccountId, account: followRequests.accountId };
  return accountsByRelation(db, rel, viewerId, page);
}
