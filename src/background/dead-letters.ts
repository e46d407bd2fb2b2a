// Messages the queues gave up on (a consumer kept throwing): kept in dead_letters for staff to look at or replay,
// so a lost fan-out or delivery is visible instead of silent.
import type { DB } from "../db/client";
import { deadLetters } from "../db/schema";
import { snowflake } from "../lib/text/ids";

export async function storeDeadLetters(db: DB, batch: MessageBatch<unknown>): Promise<void> {
  const now = Date.now();
  const rows = batch.messages.map((m) => ({
    id: snowflake(now),
    queue: batch.queue,
    body: JSON.stringify(m.body).slice(0, 100_000),
    attempts: m.attempts,
    createdAt: now,
  }));
  for (let i = 0; i < rows.length; i += 20) await db.insert(deadLetters).values(rows.slice(i, i + 20));
  for (const m of batch.messages) m.ack();
}
