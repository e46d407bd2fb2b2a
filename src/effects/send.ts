// The one road effects leave by: the JOBS queue. All the effects of one action travel as ONE message when they fit
// (a queue operation is the billing unit, and an action's effects are usually two or three); the consumer runs
// them one by one and re-sends only those that fail (./run.ts).
import type { Effects } from "./collector";
import type { Effect, JobMessage } from "./types";

/** Queue messages are at most 128 KB; effects are ids, so this is a generous bound on one pack. */
const MAX_PACK_BYTES = 96 * 1024;
const MAX_BATCH = 100; // Queue.sendBatch takes at most 100 messages.

export function packEffects(effects: Effect[], origin = ""): JobMessage[] {
  const wrap = (list: Effect[]): JobMessage =>
    list.length === 1 && !origin ? (list[0] as Effect) : { type: "effects", ...(origin ? { origin } : {}), effects: list };
  const out: JobMessage[] = [];
  let pack: Effect[] = [];
  let bytes = 0;
  for (const e of effects) {
    const size = JSON.stringify(e).length + 1;
    if (pack.length && bytes + size > MAX_PACK_BYTES) {
      out.push(wrap(pack));
      pack = [];
      bytes = 0;
    }
    pack.push(e);
    bytes += size;
  }
  if (pack.length) out.push(wrap(pack));
  return out;
}

/** Sends (and empties) what the collector holds: what runs now, then each delayed group with its delay. */
export async function sendEffects(queue: Queue<JobMessage>, fx: Effects): Promise<void> {
  await sendMessages(queue, packEffects(fx.drain(), fx.origin));
  for (const group of fx.drainLater()) await sendMessages(queue, packEffects(group.effects, fx.origin), group.seconds);
}

/**
 * Sends effects that failed in a pack back one message each, after `delaySeconds`, so each gets the queue's retries
 * (max_retries, then the dead-letter queue) without running the others again.
 */
export async function resendEach(queue: Queue<JobMessage>, origin: string, effects: Effect[], delaySeconds: number): Promise<void> {
  await sendMessages(
    queue,
    effects.map((e): JobMessage => ({ type: "effects", origin, effects: [e] })),
    delaySeconds,
  );
}

async function sendMessages(queue: Queue<JobMessage>, messages: JobMessage[], delaySeconds?: number): Promise<void> {
  const opts = delaySeconds ? { delaySeconds } : undefined;
  for (let i = 0; i < messages.length; i += MAX_BATCH) {
    const chunk = messages.slice(i, i + MAX_BATCH);
    if (chunk.length === 1) await queue.send(chunk[0] as JobMessage, opts);
    else await queue.sendBatch(chunk.map((body) => ({ body, ...opts })));
  }
}
