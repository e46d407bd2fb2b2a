// Follow, Accept{Follow}, Reject{Follow} and Undo{Follow} (Mastodon's ActivityPub::Activity::Follow/Accept/Reject).
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { accountDomainBlocks, accounts, blocks, followRequests, follows } from "../../../db/schema/index";
import type { AccountRow } from "../../../db/schema/index";
import type { BatchItem } from "drizzle-orm/batch";
import { acceptRequest, beginFollow, endFollow } from "../../../services/relationships/follows";
import { isUniqueViolation } from "../../../db/unique";
import { drop, localAccountByUri, prop, typeOf, withFinish, type InboxContext } from "./context";
import { accountRows } from "../../../db/table-rows";

export async function handleFollow(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  // One batch: the followed local account (localAccountByUri's row) and, through it, the checks and existing rows.
  const uri = activity.objectId ?? "";
  const target$ = sql`(SELECT la.id FROM accounts la WHERE la.domain IS NULL AND (la.uri = ${uri} OR la.url = ${uri}) LIMIT 1)`;
  const [targets, blocked, domainBlocked, existing, request] = await db.batch([
    accountRows(db, { where: and(sql`${accounts.domain} IS NULL`, sql`(${accounts.uri} = ${uri} OR ${accounts.url} = ${uri})`), limit: 1 }),
    db
      .select({ id: blocks.id })
      .from(blocks)
      .where(and(sql`${blocks.accountId} = ${target$}`, eq(blocks.targetAccountId, signer.id)))
      .limit(1),
    db
      .select({ id: accountDomainBlocks.id })
      .from(accountDomainBlocks)
      .where(and(sql`${accountDomainBlocks.accountId} = ${target$}`, eq(accountDomainBlocks.domain, signer.domain ?? "")))
      .limit(1),
    db
      .select()
      .from(follows)
      .where(and(eq(follows.accountId, signer.id), sql`${follows.targetAccountId} = ${target$}`))
      .limit(1),
    db
      .select()
      .from(followRequests)
      .where(and(eq(followRequests.accountId, signer.id), sql`${followRequests.targetAccountId} = ${target$}`))
      .limit(1),
  ]);
  const found = activity.objectId ? targets[0] : undefined;
  const target = found && !found.suspendedAt ? found : null;
  if (!target || target.username === "instance.actor") return drop("follow of an unknown local account");
  const followUri = activity.id ?? `${signer.uri}#follows/${target.id}`;
  if (blocked.length || domainBlocked.length || target.movedToAccountId) {
    ctx.fx.federate({ kind: "reject_follow", accountId: target.id, followerId: signer.id, followUri });
    return;
  }
  if (existing[0]) {
    // A repeated Follow (the remote lost our Accept): fast-forward with the new id and accept again.
    await db.update(follows).set({ uri: followUri }).where(eq(follows.id, existing[0].id));
    ctx.fx.federate({ kind: "accept_follow", accountId: target.id, followerId: signer.id, followUri });
    return;
  }
  if (request[0]) {
    if (request[0].uri !== followUri) await db.update(followRequests).set({ uri: followUri }).where(eq(followRequests.id, request[0].id));
    return;
  }
  const pending = !!(target.locked || signer.silencedAt);
  // The same follow as a local one (services/relationships/follows.ts beginFollow); the inbox item's finishing statements go in its
  // batch (withFinish).
  const change = beginFollow(db, { followerId: signer.id, targetId: target.id, pending, uri: followUri, followerLocal: false });
  const w = withFinish(ctx, change.stmts, change.notify);
  try {
    w.committed(await db.batch(w.stmts as [BatchItem<"sqlite">]));
    change.effects(ctx.fx);
    if (!pending) ctx.fx.federate({ kind: "accept_follow", accountId: target.id, followerId: signer.id, followUri });
  } catch (e) {
    // A parallel copy of the same Follow got there first.
    if (!isUniqueViolation(e, "follows") && !isUniqueViolation(e, "follow_requests")) throw e;
  }
}

/**
 * The local account whose follow request (to the signer) an Accept/Reject answers: by the Follow's id, or by the
 * embedded Follow's actor. Only the followee can answer (C23): the request must target the signer.
 */
async function answeredFollower(ctx: InboxContext): Promise<{ local: AccountRow | null; uri: string | null }> {
  const { activity, cfg } = ctx;
  const obj = activity.object;
  const uri = activity.objectId;
  if (obj && typeOf(obj) && typeOf(obj) !== "Follow") return { local: null, uri: null };
  if (obj) {
    if (prop(obj, "object") && prop(obj, "object") !== ctx.signer.uri) return { local: null, uri: null };
    return { local: await localAccountByUri(ctx.db, prop(obj, "actor")), uri };
  }
  // Our Follow ids are `${origin}/<uuid>` or `<actor>#follows/<id>`: the latter names the local follower.
  if (uri?.startsWith(`${cfg.origin}/`) && uri.includes("#follows/")) {
    return { local: await localAccountByUri(ctx.db, uri.slice(0, uri.indexOf("#"))), uri };
  }
  return { local: null, uri };
}

export async function handleAccept(ctx: InboxContext): Promise<void> {
  const { db, signer } = ctx;
  const { local, uri } = await answeredFollower(ctx);
  const matches = [];
  if (uri) matches.push(eq(followRequests.uri, uri));
  if (local) matches.push(eq(followRequests.accountId, local.id));
  if (!matches.length) return drop("accept of nothing we know");
  const [req] = await db
    .select()
    .from(followRequests)
    .where(and(eq(followRequests.targetAccountId, signer.id), or(...matches)))
    .limit(1);
  if (!req) return drop("accept without a matching request from us to the signer");
  const change = acceptRequest(db, req, false);
  await db.batch(change.stmts as [BatchItem<"sqlite">]);
  change.effects(ctx.fx);
}

export async function handleReject(ctx: InboxContext): Promise<void> {
  const { local, uri } = await answeredFollower(ctx);
  if (!uri && !local) return drop("reject of nothing we know");
  await endFollows(ctx, await followsMatching(ctx, "followed", uri, local?.id ?? null));
}

/**
 * The follows and follow requests the signer is on one `side` of (the "followed" one for a Reject, the "follower" one
 * for an Undo), that match the Follow's `uri` or have `other` on the other side: endFollows rows.
 */
async function followsMatching(ctx: InboxContext, side: "follower" | "followed", uri: string | null, other: string | SQL | null) {
  const query = (t: typeof follows | typeof followRequests) => {
    const [signerCol, otherCol] = side === "follower" ? [t.accountId, t.targetAccountId] : [t.targetAccountId, t.accountId];
    return ctx.db
      .select({ id: t.id, accountId: t.accountId, targetId: t.targetAccountId })
      .from(t)
      .where(and(eq(signerCol, ctx.signer.id), or(uri ? eq(t.uri, uri) : undefined, other ? eq(otherCol, other) : undefined)));
  };
  const [f, r] = await ctx.db.batch([query(follows), query(followRequests)]);
  return [
    ...f.map((x) => ({ follow: x, accountId: x.accountId, targetId: x.targetId })),
    ...r.map((x) => ({ request: x, accountId: x.accountId, targetId: x.targetId })),
  ];
}

/** Ends the given follows and requests with the shared state change (services/relationships/follows.ts `endFollow`), one batch. */
async function endFollows(
  ctx: InboxContext,
  rows: { follow?: { id: string }; request?: { id: string }; accountId: string; targetId: string }[],
  last = false,
): Promise<void> {
  if (!rows.length) return;
  const changes = rows.map((x) => endFollow(ctx.db, x.accountId, x.targetId, x));
  const stmts = changes.flatMap((ch) => ch.stmts);
  // `last`: nothing is written after this batch, so the inbox item's finishing statements may join it.
  const w = last ? withFinish(ctx, stmts) : { stmts, committed: () => {} };
  await ctx.db.batch(w.stmts as [BatchItem<"sqlite">]);
  w.committed();
  for (const ch of changes) ch.effects(ctx.fx);
}

/** Undo{Follow}: the signer stops following (or withdraws its request to) a local account. */
export async function undoFollow(ctx: InboxContext, followUri: string | null, embedded: Record<string, unknown> | null, last = false): Promise<boolean> {
  // The followed local account (localAccountByUri: local, not suspended) as a subquery of the batch below.
  const targetUri = embedded ? prop(embedded, "object") : null;
  const target$ = targetUri
    ? sql`(SELECT la.id FROM accounts la WHERE la.domain IS NULL AND (la.uri = ${targetUri} OR la.url = ${targetUri}) AND la.suspended_at IS NULL LIMIT 1)`
    : null;
  if (!followUri && !target$) return false;
  const rows = await followsMatching(ctx, "follower", followUri, target$);
  if (!rows.length) return false;
  await endFollows(ctx, rows, last);
  return true;
}
