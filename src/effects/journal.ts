// The journal rows a request's effects are kept in since their write's batch (./commit.ts): the consumer that runs their
// message deletes them, and a send the queue refused hands them to the next cron run (./pending.ts sends them again).
import { sql } from "drizzle-orm";
import { createDb, idList } from "../db/client";

/** A consumer ran the messages these journal rows keep (./commit.ts): they go. */
export async function ackJournal(d1: D1Database, ids: readonly string[]): Promise<void> {
  if (ids.length) await createDb(d1).run(sql`DELETE FROM pending_effects WHERE id IN ${idList(ids)}`);
}

/** The queue refused what these journal rows keep: the next cron run sends them, without waiting for their grace. */
export async function releaseJournal(d1: D1Database, ids: readonly string[]): Promise<void> {
  if (ids.length) await createDb(d1).run(sql`UPDATE pending_effects SET sweep_after = 0 WHERE id IN ${idList(ids)}`);
}
