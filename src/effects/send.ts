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

/** Sends (and empties) what the collector holds. */
export async function sendEffects(queue: Queue<JobMessage>, fx: Effects | Effect[], delaySeconds?: number): Promise<void> {
  const effects = Array.isArray(fx) ? fx : fx.drain();
  const messages = packEffects(effects, Array.isArray(fx) ? "" : fx.origin);
  const opts = delaySeconds ? { delaySeconds } : undefined;
  for (let i = 0; i < messages.length; i += MAX_BATCH) {
    const chunk = messages.slice(i, i + MAX_BATCH);
    if (chunk.length === 1) await queue.send(chunk[0] as JobMessage, opts);
    else await queue.sendBatch(chunk.map((body) => ({ body, ...opts })));
  }
}
