// Pinned statuses: own statuses of any visibility, not reblogs, at most MAX_PINNED_STATUSES for a local account;
// federated as Add/Remove on the featured collection. This module is the one writer of status_pins rows: a local
// user's pin (REST), a remote actor's Add/Remove (federation/inbox/handlers/featured.ts) and a remote featured collection
// read whole (the fetch_featured job: background/effects-runner.ts) all write them through pinStatement,
// unpinStatement and replaceRemotePins. (A deleted status's or account's pins go in that deletion's batch:
// services/statuses/delete-status.ts, services/accounts/delete-account.ts.)
import { eq, sql } from "drizzle-orm";
import { type DB, runBatch } from "../../db/client";
import { accounts } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Config } from "../../env";
import { validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { loadVisible, render, type Json } from "./interaction-target";

export const MAX_PINNED_STATUSES = 5;

/** `accountId` has fewer than `max` pins: the condition a local pin, and its journaled Add, go under. */
const roomToPin = (accountId: string, max: number) => sql`(SELECT count(*) FROM status_pins WHERE account_id = ${padId(accountId)}) < ${max}`;

/**
 * `accountId` pins `statusId` at `at` (a pin's id is its time: pins list newest first by id). Already pinned, or
 * `max` pins reached when given, it changes nothing (the statement's `meta.changes` is 0). Mastodon limits local
 * accounts only (StatusPinValidator); a remote account's pins are what its server says.
 */
export function pinStatement(db: DB, accountId: string, statusId: string, max: number | null, at = Date.now()) {
  const pa = padId(accountId);
  const room = max === null ? sql`` : sql`WHERE ${roomToPin(accountId, max)}`;
  return db.run(sql`INSERT OR IGNORE INTO status_pins (id, account_id, status_id, created_at)
    SELECT ${padId(snowflake(at))}, ${pa}, ${padId(statusId)}, ${at} ${room}`);
}

/** `accountId` unpins `statusId` (nothing when it was not pinned). */
export function unpinStatement(db: DB, accountId: string, statusId: string) {
  return db.run(sql`DELETE FROM status_pins WHERE account_id = ${padId(accountId)} AND status_id = ${padId(statusId)}`);
}

/**
 * A remote account's pins become `statusIds` (its featured collection's items, first = most recently pinned) and the
 * account records when they were read (featured_fetched_at, which featured-collection.ts's claim reads), in one batch.
 */
export async function replaceRemotePins(db: DB, accountId: string, statusIds: string[], now = Date.now()): Promise<void> {
  const keep = JSON.stringify(statusIds.map(padId));
  await runBatch(db, [
    db.run(sql`DELETE FROM status_pins WHERE account_id = ${padId(accountId)} AND status_id NOT IN (SELECT value FROM json_each(${keep}))`),
    ...statusIds.map((sid, i) => pinStatement(db, accountId, sid, null, now - i)),
    db.update(accounts).set({ featuredFetchedAt: now }).where(eq(accounts.id, accountId)),
  ]);
}

export async function pin(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  const s = b.statuses.get(id)!;
  if (s.reblogOfId) throw validationFailed("Boosts cannot be pinned");
  if (s.accountId !== viewerId) throw validationFailed("You can only pin your own posts");
  if (!b.viewer.pinned.has(id)) {
    // The pin and its Add, only when the insert will happen: not pinned yet, and room for one more.
    const willPin = sql`NOT EXISTS (SELECT 1 FROM status_pins WHERE account_id = ${padId(viewerId)} AND status_id = ${padId(id)})
      AND ${roomToPin(viewerId, MAX_PINNED_STATUSES)}`;
    const pinned = (res: unknown[]) => !!(res[0] as D1Result).meta?.changes;
    const [r] = await commit(
      db,
      fx,
      [pinStatement(db, viewerId, id, MAX_PINNED_STATUSES)],
      (fx) => fx.federate({ kind: "pin", accountId: viewerId, statusId: id, remove: false }),
      {
        when: willPin,
        applied: pinned,
      },
    );
    if (!pinned([r])) throw validationFailed("You have already pinned the maximum number of posts");
    b.viewer.pinned.add(id);
  }
  return render(cfg, b, id);
}

export async function unpin(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  if (b.viewer.pinned.has(id)) {
    await commit(db, fx, [unpinStatement(db, viewerId, id)], (fx) => fx.federate({ kind: "pin", accountId: viewerId, statusId: id, remove: true }));
    b.viewer.pinned.delete(id);
  }
  return render(cfg, b, id);
}
