// Queue transport for workerd tests. Under per-test isolated storage, the runtime's queue consumer can run against
// another test's storage frame (or none), so these tests capture what is sent to JOBS and DELIVERY and run it through
// the real consumers' code (runJob, deliveries) inside the test. `wrangler dev` e2e tests use the real Queues.
import { env } from "cloudflare:test";
import { vi } from "vitest";
import { createDb } from "../../src/db/client";
import { type DeliveryMessage, inboxesOf } from "../../src/federation/outbound/delivery";
import { runJob } from "../../src/background/effects-runner";
import { claimJournal, doneJournal, FIRST_SEND } from "../../src/effects/journal";
import type { Effect, JobMessage } from "../../src/effects/types";

export const queued = { jobs: [] as JobMessage[], deliveries: [] as DeliveryMessage[] };

/** The effects a JOBS message carries: one, or the pack an action's effects travel in (src/effects/send.ts). */
export function unpack(m: JobMessage): Effect[] {
  return m.type === "effects" ? [...m.effects, ...(m.extra ?? [])] : [m];
}

/**
 * What the capture keeps of a message: its effects one by one, as tests look at them, except a retry, which keeps its
 * pack so that its attempt count (src/effects/retry.ts) goes with it.
 */
const captured = (m: JobMessage): JobMessage[] => (m.type === "effects" && m.attempt ? [m] : unpack(m));

// A test reads the calls of its own test only: vi.spyOn on a method that is a spy already returns that spy (Vitest 4),
// calls of the earlier tests included, so they are cleared.
function capture<T>(q: Queue<T>, into: T[], split: (m: T) => T[] = (m) => [m], taken: (m: T) => Promise<void> = async () => {}) {
  vi.spyOn(q, "send")
    .mockClear()
    .mockImplementation(async (m: T) => {
      into.push(...split(m));
      await taken(m);
      return {} as QueueSendResponse;
    });
  vi.spyOn(q, "sendBatch")
    .mockClear()
    .mockImplementation(async (ms: Iterable<MessageSendRequest<T>>) => {
      for (const m of ms) {
        into.push(...split(m.body));
        await taken(m.body);
      }
      return {} as QueueSendBatchResponse;
    });
}

/**
 * A captured message is as good as run: the capture keeps its effects one by one (without the pack's journal rows), and
 * tests run or drop them, so the journal rows that keep them (src/effects/commit.ts) are claimed and deleted when it is
 * captured, as a consumer does when it runs it. effects-journal.test.ts runs the consumer's own claim and deletion.
 */
async function ackCaptured(m: JobMessage): Promise<void> {
  if (m.type !== "effects" || !m.journal?.length) return;
  const token = m.token || FIRST_SEND;
  if (await claimJournal(env.DB, m.journal, token)) await doneJournal(env.DB, m.journal, token);
}

export function installQueueCapture(): void {
  queued.jobs.length = 0;
  queued.deliveries.length = 0;
  capture(env.JOBS, queued.jobs, captured, ackCaptured);
  // A pack of inboxes is captured as one delivery per inbox (what the consumer makes of it): tests look at who gets what.
  capture(env.DELIVERY as Queue<DeliveryMessage>, queued.deliveries, (m) =>
    inboxesOf(m).map((inbox) => ({ outboxId: m.outboxId, inbox, attempt: m.attempt, origin: m.origin })),
  );
}

/** Runs every captured JOBS message (and those they enqueue) with the consumer's own code. */
export async function runQueuedJobs(limit = 10_000): Promise<number> {
  const db = createDb(env.DB);
  let n = 0;
  while (queued.jobs.length && n < limit) {
    const job = queued.jobs.shift()!;
    await runJob(db, env, job);
    n++;
  }
  return n;
}
