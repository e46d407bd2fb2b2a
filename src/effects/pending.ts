// Effects kept in D1 and sent again by the every-minute cron: those the JOBS queue did not take (./send.ts), and a
// request's effects journaled in its write's batch (./commit.ts) that no consumer ran within their grace. Rows kept
// after a failed send cost one row written and one deleted per message; a journal row the same per action.
import { asc, lte, sql } from "drizzle-orm";
import { createDb, idList } from "../db/client";
import { pendingEffects } from "../db/schema";
import { snowflake } from "../lib/text/ids";
import { JOURNAL_GRACE_MS } from "./journal";
import type { JobMessage } from "./types";

/** Messages sent again per cron run (at most 100 go in one sendBatch). */
const RESEND_PER_RUN = 100;
/** Rows per insert: D1 binds at most 100 parameters a statement, four a row. */
const ROWS_PER_INSERT = 20;

/** Keeps messages the queue did not take; throws when D1 cannot take them either. */
export async function keepPending(d1: D1Database, messages: JobMessage[], delaySeconds: number): Promise<void> {
  if (!messages.length) return;
  const db = createDb(d1);
  const now = Date.now();
  const rows = messages.map((m) => ({ id: snowflake(now), body: JSON.stringify(m), delaySeconds, createdAt: now }));
  const inserts = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) inserts.push(db.insert(pendingEffects).values(rows.slice(i, i + ROWS_PER_INSERT)));
  const [first, ...rest] = inserts;
  if (first) await db.batch([first, ...rest]);
}

/**
 * Sends the oldest kept messages to the queue again, each with what is left of its delay, and deletes those the queue
 * took. A queue still failing leaves them for the next run. Returns how many were sent.
 */
export async function resendPending(out: { JOBS: Queue<JobMessage>; DB: D1Database }, at = Date.now()): Promise<number> {
  const db = createDb(out.DB);
  const rows = await db.select().from(pendingEffects).where(lte(pendingEffects.sweepAfter, at)).orderBy(asc(pendingEffects.id)).limit(RESEND_PER_RUN);
  if (!rows.length) return 0;
  // A journal row goes with its id and this send's token, and is claimed for it: the consumer of this message runs it and
  // deletes it (./journal.ts); until then it stays, and comes round again once its new grace is over. A kept message
  // goes.
  const token = `r${at}`;
  const requests = rows.map((r) => {
    const delaySeconds = Math.max(0, Math.ceil(r.delaySeconds - (at - r.createdAt) / 1000));
    const body = JSON.parse(r.body) as JobMessage;
    const message: JobMessage = r.journal ? { ...(body.type === "effects" ? body : { type: "effects", effects: [body] }), journal: [r.id], token } : body;
    return { body: message, ...(delaySeconds ? { delaySeconds } : {}) };
  });
  try {
    await out.JOBS.sendBatch(requests);
  } catch (e) {
    console.error("kept effects: the queue still refuses them", e instanceof Error ? e.message : e);
    return 0;
  }
  const kept = rows.filter((r) => !r.journal).map((r) => r.id);
  const journal = rows.filter((r) => r.journal).map((r) => r.id);
  await db.batch([
    db.run(sql`DELETE FROM pending_effects WHERE id IN ${idList(kept)}`),
    // The row is this send's until its new grace is over: a late first send, or a claimer that died, runs none of it.
    db.run(
      sql`UPDATE pending_effects SET claim = ${token}, sweep_after = ${at + JOURNAL_GRACE_MS} WHERE id IN ${idList(journal)} AND (claim IS NULL OR sweep_after <= ${at})`,
    ),
  ]);
  return rows.length;
}
