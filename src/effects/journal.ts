// The journal rows a request's effects are kept in since their write's batch (./commit.ts), and who runs them.
//
// A journal row's effects may reach the JOBS consumer twice: by the request's own send, and by the cron's send of a row
// no consumer claimed within its grace (./pending.ts), when the first message waited in the queue longer than that.
// So a consumer claims the row before it runs the message (`claimJournal`): the claim names the delivery (`token`: "o"
// for the request's send, its queue retries included; "r<time>" for each cron send) and holds for JOURNAL_GRACE_MS. A
// delivery that finds the row claimed by another, or gone, runs nothing of it. Once the effects ran (those that failed
// are the runner's to retry, ./retry.ts), the row goes (`doneJournal`). A claimer that died leaves its claim to expire,
// and the cron sends the row again then: each effect runs once, and none is lost.
import { sql } from "drizzle-orm";
import { createDb, idList } from "../db/client";

/** How long a journal row waits for its consumer before the cron sends it again, and how long a claim holds. */
export const JOURNAL_GRACE_MS = 5 * 60_000;

/** The claim token of a request's own send (and of the queue's retries of that message). */
export const FIRST_SEND = "o";

/** Claims the journal rows `ids` for the delivery `token`; answers whether all of them are this delivery's to run. */
export async function claimJournal(d1: D1Database, ids: readonly string[], token: string, now = Date.now(), holdMs = JOURNAL_GRACE_MS): Promise<boolean> {
  if (!ids.length) return true;
  const claimed = await createDb(d1).all<{ id: string }>(
    sql`UPDATE pending_effects SET claim = ${token}, sweep_after = ${now + holdMs}
      WHERE id IN ${idList(ids)} AND journal = 1 AND (claim IS NULL OR claim = ${token} OR sweep_after <= ${now}) RETURNING id`,
  );
  return claimed.length === ids.length;
}

/** The delivery `token` ran what the journal rows `ids` keep: they go. */
export async function doneJournal(d1: D1Database, ids: readonly string[], token: string): Promise<void> {
  if (ids.length) await createDb(d1).run(sql`DELETE FROM pending_effects WHERE id IN ${idList(ids)} AND claim = ${token}`);
}

/** The queue refused what these journal rows keep: the next cron run sends them, without waiting for their grace. */
export async function releaseJournal(d1: D1Database, ids: readonly string[]): Promise<void> {
  if (ids.length) await createDb(d1).run(sql`UPDATE pending_effects SET sweep_after = 0 WHERE id IN ${idList(ids)} AND claim IS NULL`);
}
