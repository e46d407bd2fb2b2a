// Announce (boost), Like, and their Undo.
import { and, eq, sql } from "drizzle-orm";
import { accounts, statuses } from "../../db/schema";
import type { StatusRow } from "../../entities/status";
import { padId, snowflake } from "../../lib/ids";
import { applyFavourite, favouriteChange, unfavouriteStatements } from "../../services/favourites";
import { removeStatus } from "../../services/delete-status";
import { notificationStatement } from "../../services/notifications";
import { accountCanRead } from "../../services/visibility";
import { normalizeNote, sameHost, visibilityFromAudience } from "../normalize";
import { isDomainSuspended } from "../remote-accounts";
import { isUniqueViolation } from "../../db/unique";
import { ingestNote } from "../remote-statuses";
import { resolveStatus, statusByUri } from "../resolve-status";
import { drop, type InboxContext } from "./context";

/** The original an Announce points at. An embedded copy is used only when the signer wrote it (C13). */
async function announcedStatus(ctx: InboxContext): Promise<StatusRow | null> {
  const { activity, signer } = ctx;
  const uri = activity.objectId;
  if (!uri) return null;
  const known = await statusByUri(ctx.db, uri);
  if (known) return known;
  const embedded = activity.object ? normalizeNote(activity.object) : null;
  if (embedded && embedded.id === uri && embedded.attributedTo === signer.uri && sameHost(uri, signer.uri)) {
    return ingestNote(ctx.r, embedded, signer);
  }
  return resolveStatus(ctx.r, uri);
}

export async function handleAnnounce(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  if (!activity.id) return drop("announce without id");
  if (await statusByUri(db, activity.id)) return;
  const target = await announcedStatus(ctx);
  if (!target) return drop("announced object unavailable");
  if (target.reblogOfId) return drop("announce of a boost");
  if (target.visibility !== "public" && target.visibility !== "unlisted") return drop("announce of a non-public status");
  if (!(await accountCanRead(db, signer.id, target.id))) return drop("announce of a status the actor may not see");
  const [author] = await db.select().from(accounts).where(eq(accounts.id, target.accountId)).limit(1);
  // C19: boosts of suspended accounts' posts (old ones included) are dropped.
  if (!author || author.suspendedAt || (author.domain && (await isDomainSuspended(db, author.domain, ctx.cfg))))
    return drop("announce of a suspended account's status");
  const [mine] = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, signer.id), eq(statuses.reblogOfId, target.id)))
    .limit(1);
  if (mine) return;
  const now = Date.now();
  const createdAt = Math.min(activity.published ?? now, now);
  const id = snowflake(createdAt);
  try {
    await db.batch([
      db.insert(statuses).values({
        id,
        uri: activity.id,
        url: null,
        accountId: signer.id,
        local: false,
        reblogOfId: target.id,
        visibility: visibilityFromAudience(activity.to, activity.cc, signer.followersUrl),
        createdAt,
        updatedAt: now,
      }),
      notificationStatement(db, ctx.fx, { recipientId: target.accountId, fromAccountId: signer.id, type: "reblog", statusId: target.id, activityId: id }),
    ]);
  } catch (e) {
    if (isUniqueViolation(e, "statuses")) return;
    throw e;
  }
  ctx.fx.add({ type: "fanout", statusId: id });
}

export async function handleLike(ctx: InboxContext): Promise<void> {
  const { db, signer, activity } = ctx;
  const target = activity.objectId ? await statusByUri(db, activity.objectId) : null;
  if (!target || target.reblogOfId) return drop("like of an unknown status");
  if (!(await accountCanRead(db, signer.id, target.id))) return drop("like of a status the actor may not see");
  // The same favourite as a local one (services/favourites.ts): same rows, notification and effects.
  await applyFavourite(db, ctx.fx, favouriteChange(db, ctx.fx, signer.id, target, activity.id, false));
}

export async function undoLike(ctx: InboxContext, likeUri: string | null, statusUri: string | null): Promise<boolean> {
  const { db, signer } = ctx;
  const ps = padId(signer.id);
  const byUri = likeUri ? sql`uri = ${likeUri}` : sql`0`;
  const byStatus = statusUri ? sql`status_id = (SELECT id FROM statuses WHERE uri = ${statusUri})` : sql`0`;
  const [, gone] = await db.batch(unfavouriteStatements(db, sql`(SELECT id FROM favourites WHERE account_id = ${ps} AND (${byUri} OR ${byStatus}))`));
  return gone.length > 0;
}

export async function undoAnnounce(ctx: InboxContext, announceUri: string | null): Promise<boolean> {
  const { db, signer } = ctx;
  if (!announceUri) return false;
  const [s] = await db
    .select()
    .from(statuses)
    .where(and(eq(statuses.uri, announceUri), eq(statuses.accountId, signer.id)))
    .limit(1);
  if (!s?.reblogOfId) return false;
  // The boost goes the way any status goes: feeds, notifications, open streams (a delete event) and fan-out.
  await removeStatus(db, ctx.fx, s);
  return true;
}
