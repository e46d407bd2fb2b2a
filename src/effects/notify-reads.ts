// What `notify` effects read before they stream and push (run.ts notifyAll): who wants a push, and each notification as
// its recipient sees it. One round trip; or none, when the write batch that made the notifications read them at its
// end (an incoming activity processed in the invocation that took it: src/federation/handlers/context.ts withFinish).
// The reads made ahead travel with the effect objects themselves, in memory: an effect that goes to the queue leaves
// them behind and is read again by whoever runs it.
import type { DB, Statement } from "../db/client";
import { pushTargetsStatement } from "../push";
import { notificationsForRecipientsStatements } from "../queries/notifications";
import type { Effect } from "./types";

/** Up to this many notifications at once, they are read whole with their push targets. */
export const STREAM_READ_WHOLE = 10;

export type NotifyEffect = Extract<Effect, { type: "notify" }>;

export const notifyReadStatements = (db: DB, ids: string[]) => [pushTargetsStatement(db, ids), ...notificationsForRecipientsStatements(db, ids)] as const;

/** One round trip for the reads of `ids`. */
export const readNotify = (db: DB, ids: string[]) => db.batch(notifyReadStatements(db, ids));

export type NotifyReads = Awaited<ReturnType<typeof readNotify>>;

interface ReadAhead {
  ids: string[];
  results: NotifyReads;
}

// Keyed by the effect object: entries go when taken, or with the effect if it is dropped.
const readAhead = new WeakMap<NotifyEffect, ReadAhead>();

/**
 * The reads of the notify effects `list` holds that have none yet, as statements to end a write batch with (they then
 * see the batch's notifications), and `keep` to call with that batch's last results once it has committed. Null when
 * there is nothing to read, or more than is read whole.
 */
export function notifyReadsAhead(db: DB, list: readonly Effect[]): { stmts: Statement[]; keep: (results: readonly unknown[]) => void } | null {
  const effects = list.filter((e): e is NotifyEffect => e.type === "notify" && !readAhead.has(e));
  if (!effects.length || effects.length > STREAM_READ_WHOLE) return null;
  const ids = effects.map((e) => e.notificationId);
  const stmts = notifyReadStatements(db, ids);
  return {
    stmts: [...stmts],
    keep(results) {
      if (results.length < stmts.length) return;
      const ahead = { ids, results: results.slice(results.length - stmts.length) as unknown as NotifyReads };
      for (const e of effects) readAhead.set(e, ahead);
    },
  };
}

/** The reads made ahead for exactly these notify effects, taken once; null when they must be read now. */
export function takeReadAhead(effects: readonly NotifyEffect[]): NotifyReads | null {
  const first = effects[0];
  const ahead = first && readAhead.get(first);
  if (!ahead || ahead.ids.length !== effects.length || !effects.every((e) => readAhead.get(e) === ahead)) return null;
  for (const e of effects) readAhead.delete(e);
  return ahead.results;
}
