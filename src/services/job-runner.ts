import type { Env } from "../env";
import type { JobMessage } from "./jobs";

/** JOBS queue consumer: one handler per message type (timelines/fanout.ts etc.). */
export async function handleJobs(batch: MessageBatch<JobMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  for (const m of batch.messages) m.ack();
}
