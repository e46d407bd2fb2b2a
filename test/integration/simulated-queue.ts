// A Cloudflare queue with a clock, for tests of who retries what (src/effects/retry.ts): what is sent waits for its
// delay; `drain` runs what is due, one message per invocation (wrangler.toml: max_batch_size 1 for tern-jobs and
// tern-delivery), in order of due time, through the real consumer. It honours ack, retry (with its delay), a consumer
// that throws (its unacked messages are retried, as the runtime does), max_retries and the dead-letter queue.
// The clock is virtual seconds from 0 (`sim.now`); `clock` is told each run's time, for tests whose consumer reads
// Date.now (a delivery circuit's cool-off).
import { env } from "cloudflare:test";
import { vi } from "vitest";
import type { Env } from "../../src/env";

/** wrangler.toml's max_retries for tern-jobs and tern-delivery: after that many retries a message is dead-lettered. */
export const QUEUE_MAX_RETRIES = 10;

export interface Held<T> {
  body: T;
  /** Virtual seconds at which it is delivered. */
  due: number;
  /** Cloudflare's Message.attempts: 1 on the first delivery, one more on each queue-level retry. */
  attempts: number;
}

export interface SimulatedQueueOptions<T> {
  /** The producer binding whose send/sendBatch feed this queue (spied on). */
  binding: Queue<T>;
  /** The queue name the consumer sees (MessageBatch.queue). */
  name: string;
  consumer: (batch: MessageBatch<T>, env: Env) => Promise<void>;
  maxRetries?: number;
  /** Told the virtual time (seconds) before each run. */
  clock?: (now: number) => void;
}

export interface DrainOptions {
  env?: Env;
  /** Stop once the next message is due after this (virtual seconds). */
  until?: number;
  /** Runs at most (a runaway guard: a test asserts on sim.runs). */
  maxRuns?: number;
  after?: () => Promise<void>;
}

export function simulatedQueue<T>(o: SimulatedQueueOptions<T>) {
  const held: Held<T>[] = [];
  const maxRetries = o.maxRetries ?? QUEUE_MAX_RETRIES;
  const sim = {
    now: 0,
    runs: 0,
    /** Invocations that threw (the runtime then retries their unacked messages). */
    crashes: 0,
    queueRetries: 0,
    deadLetterQueue: 0,
    bodies: [] as T[],
    /** Bodies dead-lettered by the queue itself (after max_retries). */
    deadLettered: [] as T[],
  };
  vi.spyOn(o.binding, "send").mockImplementation(async (body: T, opts?: QueueSendOptions) => {
    held.push({ body, due: sim.now + (opts?.delaySeconds ?? 0), attempts: 1 });
    return {} as QueueSendResponse;
  });
  vi.spyOn(o.binding, "sendBatch").mockImplementation(async (ms: Iterable<MessageSendRequest<T>>, opts?: QueueSendBatchOptions) => {
    for (const m of ms) held.push({ body: m.body, due: sim.now + (m.delaySeconds ?? opts?.delaySeconds ?? 0), attempts: 1 });
    return {} as QueueSendBatchResponse;
  });

  /** Runs messages one per invocation until none is left, `until` is reached, or `maxRuns` ran. */
  async function drain(opts: DrainOptions = {}) {
    const limit = opts.maxRuns ?? 2_000;
    for (let i = 0; held.length && i < limit; i++) {
      held.sort((a, b) => a.due - b.due);
      if (opts.until !== undefined && (held[0] as Held<T>).due > opts.until) break;
      const m = held.shift() as Held<T>;
      sim.now = Math.max(sim.now, m.due);
      o.clock?.(sim.now);
      let acked = false;
      let retryDelay: number | null = null;
      const message = {
        id: String(sim.runs),
        timestamp: new Date(),
        body: m.body,
        attempts: m.attempts,
        ack: () => {
          acked = true;
        },
        retry: (r?: QueueRetryOptions) => {
          retryDelay = r?.delaySeconds ?? 0;
        },
      };
      sim.runs++;
      sim.bodies.push(m.body);
      const batch = { queue: o.name, messages: [message], ackAll() {}, retryAll() {} } as unknown as MessageBatch<T>;
      try {
        await o.consumer(batch, opts.env ?? (env as Env));
      } catch {
        sim.crashes++;
      }
      // Not acked: the queue's own retry (a crash, or a retry() call), until max_retries, then the dead-letter queue.
      if (!acked && m.attempts > maxRetries) {
        sim.deadLetterQueue++;
        sim.deadLettered.push(m.body);
      } else if (!acked) {
        sim.queueRetries++;
        held.push({ ...m, attempts: m.attempts + 1, due: sim.now + (retryDelay ?? 0) });
      }
      await opts.after?.();
    }
    return sim;
  }
  return { held, sim, drain };
}
