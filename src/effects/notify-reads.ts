// What `notify` effects read before they stream and push (effects-runner.ts notifyAll): who wants a push, and each
// notification as its recipient sees it. One round trip; or none, when the write batch that made the notifications read
// them at its end (an incoming activity processed in the invocation that took it: src/federation/inbox/handlers/context.ts
// withFinish). The reads made ahead travel with the effects on their collector, in memory (Effects.carry): an effect
// that goes to the queue leaves them behind and is read again by whoever runs it.
import type { AheadRead, DB } from "../db/client";
import { pushTargetsStatement } from "../push";
import { notificationsForRecipientsStatements } from "../queries/notifications/notifications";
import { carriedKind, type Effects } from "./collector";
import type { NotifyEffect } from "./types";

export type { NotifyEffect };

/** Up to this many notifications at once, they are read whole with their push targets. */
export const STREAM_READ_WHOLE = 10;

export const notifyReadStatements = (db: DB, ids: string[]) => [pushTargetsStatement(db, ids), ...notificationsForRecipientsStatements(db, ids)] as const;

/** One round trip for the reads of `ids`. */
export const readNotify = (db: DB, ids: string[]) => db.batch(notifyReadStatements(db, ids));

export type NotifyReads = Awaited<ReturnType<typeof readNotify>>;

/** Reads made once for a group of notify effects: each effect of the group carries the same one. */
interface ReadAhead {
  ids: string[];
  results: NotifyReads;
}

const READ_AHEAD = carriedKind<ReadAhead>("notify reads");

/**
 * The reads of the notify effects that have none yet, among those recorded on `fx` and `notify` (those of the batch
 * about to run, recorded once it committed), as statements to end that write batch with (they then see its
 * notifications), and `keep` to call with the batch's results once it has committed: each of those effects then carries
 * them on `fx`. Null when there is nothing to read, or more than is read whole.
 */
export function notifyReadsAhead(db: DB, fx: Effects, notify: readonly NotifyEffect[]): AheadRead | null {
  const recorded = fx.list.filter((e): e is NotifyEffect => e.type === "notify");
  const effects = [...new Set([...recorded, ...notify])].filter((e) => !fx.carried(e, READ_AHEAD));
  if (!effects.length || effects.length > STREAM_READ_WHOLE) return null;
  const ids = effects.map((e) => e.notificationId);
  const stmts = notifyReadStatements(db, ids);
  return {
    stmts: [...stmts],
    keep(results) {
      if (results.length !== stmts.length) return;
      const ahead = { ids, results: results as unknown as NotifyReads };
      for (const e of effects) fx.carry(e, READ_AHEAD, ahead);
    },
  };
}

/** The reads made ahead for exactly these notify effects (taken from `fx` once); null when they must be read now. */
export function takeReadAhead(fx: Effects, effects: readonly NotifyEffect[]): NotifyReads | null {
  const aheads = effects.map((e) => fx.take(e, READ_AHEAD));
  const ahead = aheads[0];
  if (!ahead || ahead.ids.length !== effects.length || !aheads.every((a) => a === ahead)) return null;
  return ahead.results;
}
