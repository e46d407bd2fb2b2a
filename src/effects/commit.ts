// A write's batch and the effects that follow from it, committed together. On a request's collector (Effects.journals)
// the effects are written into the batch itself, as `pending_effects` rows (the journal): an invocation that dies
// after the commit and before the queue send loses none of them, because the every-minute cron sends again each
// journal row that no consumer ran within JOURNAL_GRACE_MS (./pending.ts). When it lives, the send names the rows
// (./send.ts) and the consumer that runs the message deletes them (src/background/effects-runner.ts runJob): one row
// written in the write's batch, one deleted by the consumer, and no round trip more on the request.
//
// The effects are recorded before the batch runs, on a collector of their own, and reach the caller's collector only
// once the batch committed: a batch that fails records nothing, as before. Effects that depend on what the batch
// returned are recorded after it, as before, and travel only by the send (and D1 when the queue refuses them).
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { DB } from "../db/client";
import { pendingEffects } from "../db/schema";
import { snowflake } from "../lib/text/ids";
import { Effects } from "./collector";
import { packGroups, packMessage } from "./send";
import type { Effect } from "./types";

/** How long a journal row waits for its consumer before the cron sends it again (past any delay it carries). */
export const JOURNAL_GRACE_MS = 5 * 60_000;

type Stmts = readonly BatchItem<"sqlite">[];

/**
 * Runs `stmts` as one batch and records the effects `record` makes once it committed; on a journaling collector those
 * effects are written in the same batch. Answers the statements' results, as db.batch does.
 */
export async function commit<T extends Stmts>(db: DB, fx: Effects, stmts: T, record: (fx: Effects) => void): Promise<BatchResponse<T>> {
  const own = new Effects(fx.origin);
  record(own);
  const rows = fx.journals ? journalRows(own) : [];
  if (!rows.length) {
    const results = stmts.length ? await db.batch(stmts as unknown as [BatchItem<"sqlite">]) : [];
    fx.adopt(own);
    return results as unknown as BatchResponse<T>;
  }
  const withJournal = [...stmts, db.insert(pendingEffects).values(rows.map((r) => r.row))] as unknown as [BatchItem<"sqlite">];
  const results = (await db.batch(withJournal)) as unknown as unknown[];
  for (const r of rows) own.journaled(r.row.id, r.effects);
  fx.adopt(own);
  return results.slice(0, stmts.length) as unknown as BatchResponse<T>;
}

/** A change's statements and effects (a Change of src/services/relationships/follows.ts), committed together. */
export const commitChange = (db: DB, fx: Effects, change: { stmts: BatchItem<"sqlite">[]; effects: (fx: Effects) => void }): Promise<unknown[]> =>
  commit(db, fx, change.stmts, change.effects) as Promise<unknown[]>;

/** The journal rows of what `own` recorded to run now and later: one per message it would send. */
function journalRows(own: Effects) {
  const now = Date.now();
  const rows: { row: typeof pendingEffects.$inferInsert & { id: string }; effects: Effect[] }[] = [];
  const add = (effects: Effect[], delaySeconds: number) => {
    for (const list of packGroups(effects)) {
      const body = JSON.stringify(packMessage(list, own.origin));
      rows.push({ row: { id: snowflake(now), body, delaySeconds, createdAt: now, sweepAfter: now + delaySeconds * 1000 + JOURNAL_GRACE_MS }, effects: list });
    }
  };
  add([...own.list], 0);
  for (const group of own.laterGroups) add([...group.effects], group.seconds);
  return rows;
}
