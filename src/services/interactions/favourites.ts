// Favourites. `favouriteChange` and `unfavouriteChange` are the one favourite, whether a local user favourites
// (REST) or a remote actor's Like arrives (federation/inbox/handlers/announce.ts): same rows, same notification, same effects.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { insertFavourite } from "../../db/inserts";
import { favourites } from "../../db/schema";
import { isUniqueViolation } from "../../db/unique";
import type { Effects } from "../../effects/collector";
import { commitChange } from "../../effects/commit";
import { loadStatusBundle, type StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { padId, snowflake } from "../../lib/text/ids";
import type { Change } from "../relationships/follows";
import { bump, loadVisible, render, renderAnyway, targetOf, type Json, type UndoneStatus } from "./interaction-target";
import { notificationWrite, retractNotificationsStatement } from "../notifications/notifications";

/**
 * `accountId` favourites `target` (an original, never a reblog). `uri` is the remote Like's id when it came from
 * another server; a local favourite of a remote status is sent there as a Like.
 */
export function favouriteChange(db: DB, accountId: string, target: Pick<StatusRow, "id" | "accountId">, uri: string | null, federateTo: boolean): Change {
  const now = Date.now();
  const favId = snowflake(now);
  const note = notificationWrite(db, { recipientId: target.accountId, fromAccountId: accountId, type: "favourite", statusId: target.id, activityId: favId });
  return {
    stmts: [insertFavourite(db, { id: favId, accountId, statusId: target.id, uri, createdAt: now }), note.statement],
    notify: [note.effect],
    effects: (fx) => {
      fx.add(note.effect);
      if (federateTo) fx.federate({ kind: "like", accountId, statusId: target.id, favouriteId: favId });
    },
  };
}

/** Removes `accountId`'s favourites matched by `which` (a SELECT of favourites ids) and their notifications. */
export function unfavouriteStatements(db: DB, which: ReturnType<typeof sql>) {
  return [
    // The favourited status's author is the recipient.
    retractNotificationsStatement(
      db,
      "favourite",
      sql`SELECT s.account_id AS recipient, f.id AS activity FROM favourites f JOIN statuses s ON s.id = f.status_id WHERE f.id IN ${which}`,
    ),
    db.delete(favourites).where(sql`${favourites.id} IN ${which}`).returning({ statusId: favourites.statusId, id: favourites.id }),
  ] as const;
}

/** Applies a favourite change; false when a parallel request or activity favourited it first. */
export async function applyFavourite(db: DB, fx: Effects, change: Change): Promise<readonly unknown[] | null> {
  try {
    return await commitChange(db, fx, change);
  } catch (err) {
    if (isUniqueViolation(err, "favourites")) return null;
    throw err;
  }
}

export async function favourite(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!b.viewer.favourited.has(target.id)) {
    const remote = !!b.accounts.get(target.accountId)?.domain;
    if (await applyFavourite(db, fx, favouriteChange(db, viewerId, target, null, remote))) {
      bump(b, target.id, { favouritesCount: target.favouritesCount + 1 });
    }
    b.viewer.favourited.add(target.id);
  }
  return render(cfg, b, target.id);
}

export async function unfavourite(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<UndoneStatus> {
  const which = sql`(SELECT id FROM favourites WHERE account_id = ${padId(viewerId)} AND status_id = ${targetOf(id)})`;
  const [, removed] = await db.batch(unfavouriteStatements(db, which));
  const targetId = removed[0]?.statusId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.favourited.delete(targetId);
  // Recorded after the batch: the Undo names the favourite the delete returned; it travels by the send only
  // (src/effects/commit.ts).
  if (removed[0] && b.accounts.get(b.statuses.get(targetId)?.accountId ?? "")?.domain)
    fx.federate({ kind: "undo_like", accountId: viewerId, statusId: targetId, favouriteId: removed[0].id });
  return removed.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
}
