// Effects kept in D1 and sent again by the every-minute cron: those the JOBS queue did not take (./send.ts), and a
// request's effects journaled in its write's batch (./commit.ts) that no consumer ran within their grace. Rows kept
// after a failed send cost one row written and one deleted per message; a journal row the same per action.
import { asc, lte, sql } from "drizzle-orm";
import { createDb, idList } from "../db/client";
import { pendingEffects } from "../db/schema";
import { snowflake } from "../lib/text/ids";
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
  const requests = rows.map((r) => {
    const delaySeconds = Math.max(0, Math.ceil(r.delaySeconds - (at - r.createdAt) / 1000));
    return { body: JSON.parse(r.body) as JobMessage, ...(delaySeconds ? { delaySeconds } : {}) };
  });
  try {
    await out.JOBS.sendBatch(requests);
  } catch (e) {
    console.error("kept effects: the queue still refuses them", e instanceof Error ? e.message : e);
    return 0;
  }
  await db.run(sql`DELETE FROM pending_effects WHERE id IN ${idList(rows.map((r) => r.id))}`);
  return rows.length;
}
