// A write's batch and the effects that follow from it, committed together. On a request's collector (Effects.journals)
// the effects are written into the batch itself, as `pending_effects` rows (the journal): an invocation that dies
// after the commit and before the queue send loses none of them, because the every-minute cron sends again each
// journal row that no consumer claimed within JOURNAL_GRACE_MS (./pending.ts). When it lives, the send names the row of
// each message (./send.ts), and the consumer that runs it claims the row first and deletes it after (./journal.ts;
// src/background/effects-runner.ts runJob): one row written in the write's batch, one claim and one delete by the
// consumer, and no round trip more on the request.
//
// The effects are recorded before the batch runs, on a collector of their own, and reach the caller's collector only
// once the batch committed: a batch that fails records nothing, as before. Effects that depend on what the batch
// returned are recorded after it, as before, and travel only by the send (and D1 when the queue refuses them).
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import { type SQL, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { pendingEffects } from "../db/schema";
import { padId, snowflake } from "../lib/text/ids";
import { Effects } from "./collector";
import { JOURNAL_GRACE_MS } from "./journal";
import { packGroups, packMessage } from "./pack";
import type { Effect } from "./types";

export { JOURNAL_GRACE_MS } from "./journal";

type Stmts = readonly BatchItem<"sqlite">[];

/**
 * Runs `stmts` as one batch and records the effects `record` makes once it committed; on a journaling collector those
 * effects are written in the same batch. Answers the statements' results, as db.batch does.
 * `when`: a condition the journal rows are written under, checked before the batch's own statements (e.g. "the status
 * still exists" for a delete that a parallel request may have made first, whose batch then deletes nothing);
 * `applied`: the same question asked of the batch's results, whose "no" drops the recorded effects.
 */
export async function commit<T extends Stmts>(
  db: DB,
  fx: Effects,
  stmts: T,
  record: (fx: Effects) => void,
  opts: { when?: SQL; applied?: (results: unknown[]) => boolean } = {},
): Promise<BatchResponse<T>> {
  const own = new Effects(fx.origin);
  record(own);
  const rows = fx.journals ? journalRows(own) : [];
  if (!rows.length) {
    const results = (stmts.length ? await db.batch(stmts as unknown as [BatchItem<"sqlite">]) : []) as unknown[];
    if (opts.applied?.(results) ?? true) fx.adopt(own);
    return results as unknown as BatchResponse<T>;
  }
  const when = opts.when;
  const journal = when
    ? rows.map(({ row: r }) =>
        db.run(sql`INSERT INTO pending_effects (id, body, delay_seconds, created_at, sweep_after, journal)
          SELECT ${padId(r.id)}, ${r.body}, ${r.delaySeconds}, ${r.createdAt}, ${r.sweepAfter}, 1 WHERE ${when}`),
      )
    : [db.insert(pendingEffects).values(rows.map((r) => r.row))];
  const all = (when ? [...journal, ...stmts] : [...stmts, ...journal]) as unknown as [BatchItem<"sqlite">];
  const allResults = (await db.batch(all)) as unknown as unknown[];
  const results = when ? allResults.slice(journal.length) : allResults.slice(0, stmts.length);
  for (const r of rows) own.journaled(r.row.id, r.effects);
  if (opts.applied?.(results) ?? true) fx.adopt(own);
  return results as unknown as BatchResponse<T>;
}

/** A change's statements and effects (a Change of src/services/relationships/follows.ts), committed together. */
export const commitChange = (db: DB, fx: Effects, change: { stmts: BatchItem<"sqlite">[]; effects: (fx: Effects) => void }): Promise<unknown[]> =>
  commit(db, fx, change.stmts, change.effects) as Promise<unknown[]>;

/** The journal rows of what `own` recorded to run now and later: one per message it would send. */
function journalRows(own: Effects) {
  const now = Date.now();
  const rows: { row: { id: string; body: string; delaySeconds: number; createdAt: number; sweepAfter: number; journal: boolean }; effects: Effect[] }[] = [];
  const add = (effects: Effect[], delaySeconds: number) => {
    for (const list of packGroups(effects)) {
      const body = JSON.stringify(packMessage(list, own.origin));
      rows.push({
        row: { id: snowflake(now), body, delaySeconds, createdAt: now, sweepAfter: now + delaySeconds * 1000 + JOURNAL_GRACE_MS, journal: true },
        effects: list,
      });
    }
  };
  add([...own.list], 0);
  for (const group of own.laterGroups) add([...group.effects], group.seconds);
  return rows;
}
