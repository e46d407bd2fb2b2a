// The Queue consumers, by queue: JOBS runs effects (src/background/effects-runner.ts), DELIVERY sends signed activities to other
// servers (src/federation/outbound/delivery.ts), and what exhausted its retries lands in the dead-letter store.
import { createDb } from "../db/client";
import { handleJobs } from "./effects-runner";
import type { JobMessage } from "../effects/types";
import type { Env } from "../env";
import { handleDeliveries, type DeliveryMessage } from "../federation/outbound/delivery";
import { storeDeadLetters } from "./dead-letters";

export async function handleQueue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  if (batch.queue.startsWith("tern-jobs")) return handleJobs(batch as MessageBatch<JobMessage>, env);
  if (batch.queue.startsWith("tern-delivery")) return handleDeliveries(batch as MessageBatch<DeliveryMessage>, env);
  // Dead letters: stored for staff (dead_letters table); an admin view of them comes with the admin API.
  console.warn("dead letters", batch.queue, batch.messages.length);
  return storeDeadLetters(createDb(env.DB), batch);
}
