// Activities about accounts: Update{Actor}, Delete{Actor} (a reversible suspension, as Mastodon ≥3.3 treats it),
// Block and Undo{Block}.
import { and, eq, isNull, sql } from "drizzle-orm";
import { type DB, runBatch } from "../../../db/client";
import { accounts } from "../../../db/schema/index";
import { padId } from "../../../lib/text/ids";
import type { BatchItem } from "drizzle-orm/batch";
import { blockChange, unblockStatement } from "../../../services/relationships/blocks";
import { resolveActor } from "../../remote/remote-accounts";
import { isUniqueViolation } from "../../../db/unique";
import { drop, localAccountByUri, typeOf, type InboxContext } from "./context";

const ACTOR_TYPES = new Set(["Person", "Service", "Application", "Group", "Organization"]);

/**
 * Update{Person}: only of the signer itself (C14); the document is re-fetched from its id, not taken from the body.
 * `suspended: true` in the update suspends the account here (origin remote, reversible); an account its own server
 * had suspended (that way, or by Delete{Actor}) comes back with its next plain Update; a suspension by our staff stays.
 */
export async function handleUpdateActor(ctx: InboxContext): Promise<void> {
  if (ctx.activity.objectId !== ctx.signer.uri) return drop("update of another actor");
  await resolveActor(ctx.db, ctx.cfg, ctx.signer.uri, { refresh: true });
  // Mastodon federates a (reversible) suspension as an Update of the actor with `suspended: true`.
  if (ctx.activity.object?.suspended === true) {
    if (!ctx.signer.suspendedAt) await runBatch(ctx.db, remoteSuspendStatements(ctx.db, ctx.signer.id));
    return;
  }
  if (ctx.signer.suspendedAt && ctx.signer.suspensionOrigin === "remote") {
    await ctx.db
      .update(accounts)
      .set({ suspendedAt: null, suspensionOrigin: null, updatedAt: Date.now() })
      .where(and(eq(accounts.id, ctx.signer.id), eq(accounts.suspensionOrigin, "remote")));
  }
}

/** A remote-origin suspension of the signer lifts only through its own Update (anything else stays dropped). */
export const liftsRemoteSuspension = (ctx: InboxContext): boolean => {
  const t = typeOf(ctx.activity.object);
  return (
    ctx.signer.suspensionOrigin === "remote" && ctx.activity.type === "Update" && ctx.activity.objectId === ctx.signer.uri && (t === null || ACTOR_TYPES.has(t))
  );
};

/**
 * Statements suspending a remote account at its server's request (Delete{Actor}): the account and its statuses stay
 * (hidden wherever a suspended author is), so an Update from it later restores them; follows both ways, follow
 * requests, list memberships and feed rows of its statuses go. Set-based, so the count does not grow with its size.
 */
export function remoteSuspendStatements(db: DB, accountId: string, now = Date.now()) {
  const a = padId(accountId);
  const own = sql`(SELECT id FROM statuses WHERE account_id = ${a})`;
  return [
    db
      .update(accounts)
      .set({ suspendedAt: now, suspensionOrigin: "remote", updatedAt: now })
      .where(and(eq(accounts.id, accountId), isNull(accounts.suspendedAt))),
    db.run(sql`DELETE FROM home_feed WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM home_feed WHERE reblog_of_id IN ${own}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM list_feed WHERE reblog_of_id IN ${own}`),
    db.run(sql`DELETE FROM follows WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM follow_requests WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM list_accounts WHERE account_id = ${a}`),
  ] as const;
}

export async function handleDeleteActor(ctx: InboxContext): Promise<void> {
  if (ctx.activity.objectId !== ctx.signer.uri) return drop("delete of another actor");
  await runBatch(ctx.db, remoteSuspendStatements(ctx.db, ctx.signer.id));
}

export async function handleBlock(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  const target = await localAccountByUri(db, activity.objectId);
  if (!target) return drop("block of an unknown local account");
  const change = blockChange(db, signer.id, target.id, activity.id);
  try {
    await db.batch(change.stmts as [BatchItem<"sqlite">]);
  } catch (e) {
    if (!isUniqueViolation(e, "blocks")) throw e;
  }
  change.effects(ctx.fx);
}

export async function undoBlock(ctx: InboxContext, blockUri: string | null, targetUri: string | null): Promise<boolean> {
  const { db, signer } = ctx;
  const target = await localAccountByUri(db, targetUri);
  if (!blockUri && !target) return false;
  const gone = await unblockStatement(db, signer.id, { targetId: target?.id, uri: blockUri });
  return gone.length > 0;
}
