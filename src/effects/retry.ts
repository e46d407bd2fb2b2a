// Who retries what. Every kind of queued work has ONE retry owner, never two (two owners multiply: a push that re-queued
// itself and also threw to the queue made 857 failed job runs in two minutes for one notification):
//
// - Effects (JOBS): the runner (./run.ts). A failed effect goes back in a pack that carries its attempt count, after
//   EFFECT_BACKOFF; after MAX_EFFECT_ATTEMPTS runs it is written to dead_letters. The consumer never throws a failed
//   effect to the queue.
// - A push (the `push` effect): src/push owns its tries (MAX_PUSH_ATTEMPTS, Retry-After honoured, a per-host circuit,
//   a subscription failing for days removed); the effect itself never fails to the runner.
// - Deliveries (DELIVERY): src/federation/outbound/delivery.ts owns its tries (16 attempts over about two days, a per-host
//   circuit, hosts unavailable after 7 days of failures).
// - The queue's own retries (wrangler.toml max_retries, then the dead-letter queue) are left for crashes: an invocation
//   that died, or one that could neither re-send nor record what failed.
import { createDb } from "../db/client";
import { deadLetters } from "../db/schema";
import { snowflake } from "../lib/text/ids";
import { type EffectsOut, sendRetry } from "./send";
import type { Effect } from "./types";

/** Runs of one effect at most: the first and nine retries, about two hours in all (effectRetryDelay). */
export const MAX_EFFECT_ATTEMPTS = 10;

/** Seconds before retry `attempt` (1, 2, …): 15 s doubling to an hour, plus up to a tenth more of jitter. */
export function effectRetryDelay(attempt: number, random = Math.random): number {
  const base = Math.min(3600, 15 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base + random() * base * 0.1);
}

/**
 * Effects that failed on run `attempt` (0 for the first): sent again one attempt later with the backoff, or, after
 * the last attempt, recorded in dead_letters for staff. Throws only when neither the queue nor D1 takes them.
 */
export async function retryFailed(out: EffectsOut, origin: string, failed: Effect[], attempt: number): Promise<void> {
  if (!failed.length) return;
  const next = attempt + 1;
  if (next < MAX_EFFECT_ATTEMPTS) return sendRetry(out, origin, failed, next, effectRetryDelay(next));
  console.error("effects given up after", next, "attempts:", failed.map((e) => e.type).join(", "));
  await createDb(out.DB)
    .insert(deadLetters)
    .values({
      id: snowflake(),
      queue: "tern-jobs",
      body: JSON.stringify({ type: "effects", origin, effects: failed }).slice(0, 100_000),
      attempts: next,
      createdAt: Date.now(),
    });
}
