// One retry owner for an incoming activity (src/effects/retry.ts): once its processing failed, the JOBS runner retries
// the `inbox` effect (MAX_EFFECT_ATTEMPTS runs with backoff, then dead_letters). The 5-minute sweep of inbox_items
// (requeueStaleInboxItems) is for an item whose invocation died before that: it must not start a second line of
// attempts for an item the runner is already retrying. Driven through the real consumer (handleJobs) on the simulated
// queue with a clock, the sweep run at every 5th minute of it, D1 refusing to read the item.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requeueStaleInboxItems } from "../../src/background/cron";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import { MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import { handleJobs, runHere } from "../../src/background/effects-runner";
import { sendEffects } from "../../src/effects/send";
import type { Effect, JobMessage } from "../../src/effects/types";
import type { Env } from "../../src/env";
import { storeInboxItem } from "../../src/federation/inbox/inbox-process";
import { remoteAccount } from "./federation-outbound-fixtures";
import { ORIGIN } from "./helpers";
import { simulatedQueue } from "./simulated-queue";
import { refusingBatches } from "./d1-faults";

const SWEEP_EVERY = 300;

/** D1 that refuses, while `down.on`, every batch reading inbox_items (the processing's first read). */
const flakyDb = (down: { on: boolean }): D1Database => refusingBatches(env.DB, (texts) => down.on && texts.some((q) => /inbox_items/.test(q)));

/** A Like from a remote account, stored as the inbox POST stores it (received_at: now). */
async function storedLike(): Promise<string> {
  const a = await remoteAccount(`liker${Math.random().toString(36).slice(2, 8)}`, "remote.example");
  const like = { id: `${a.uri}/likes/1`, type: "Like", actor: a.uri, object: `${ORIGIN}/nothing` };
  return storeInboxItem(createDb(env.DB), a.id, JSON.stringify(like));
}

const effectsOf = (m: JobMessage): Effect[] => (m.type === "effects" ? m.effects : [m]);
const inboxRuns = (bodies: JobMessage[]) => bodies.flatMap(effectsOf).filter((e) => e.type === "inbox").length;
const inboxDeadLetters = async () =>
  (await env.DB.prepare("SELECT body FROM dead_letters WHERE queue = 'tern-jobs'").all<{ body: string }>()).results.filter((r) => r.body.includes('"inbox"'))
    .length;
const itemExists = async (id: string) => !!(await env.DB.prepare("SELECT 1 AS x FROM inbox_items WHERE id = ?").bind(id.padStart(20, "0")).first());

/**
 * The JOBS queue with the cron beside it: from the item's arrival (virtual second 0 = its received_at), runs what is
 * due and, every 5 minutes, the sweep, for `hours`.
 */
async function runFor(hours: number, jobsEnv: Env, receivedAt: number, q: ReturnType<typeof simulatedQueue<JobMessage>>) {
  for (let t = SWEEP_EVERY; t <= hours * 3600; t += SWEEP_EVERY) {
    await q.drain({ until: t, env: jobsEnv });
    q.sim.now = Math.max(q.sim.now, t);
    const fx = new Effects(ORIGIN);
    await requeueStaleInboxItems(createDb(env.DB), fx, receivedAt + t * 1000);
    await sendEffects(env, fx);
  }
  return q.drain({ env: jobsEnv });
}

afterEach(() => vi.restoreAllMocks());

describe("an incoming activity has one retry owner", () => {
  it(`processing that fails after the response is retried by the runner alone: ${MAX_EFFECT_ATTEMPTS} runs and one dead letter, the sweep adds none`, async () => {
    const q = simulatedQueue<JobMessage>({ binding: env.JOBS, name: "tern-jobs", consumer: handleJobs });
    const down = { on: true };
    const jobsEnv = { ...(env as Env), DB: flakyDb(down) };
    const itemId = await storedLike();
    const receivedAt = Date.now();
    // The invocation that answered the POST processes it after the response (production: runHere), and fails.
    await runHere(createDb(jobsEnv.DB), jobsEnv, { type: "effects", origin: ORIGIN, effects: [{ type: "inbox", itemId, origin: ORIGIN }] });
    const sim = await runFor(3, jobsEnv, receivedAt, q);
    expect(1 + inboxRuns(sim.bodies)).toBe(MAX_EFFECT_ATTEMPTS);
    expect(await inboxDeadLetters()).toBe(1);
    expect(sim.queueRetries + sim.crashes).toBe(0);
    // The item stays for staff (the dead letter names it) until the housekeeping prunes it.
    expect(await itemExists(itemId)).toBe(true);
  });

  it(`an item its invocation never processed is taken by the sweep once: ${MAX_EFFECT_ATTEMPTS} runs and one dead letter while D1 refuses it`, async () => {
    const q = simulatedQueue<JobMessage>({ binding: env.JOBS, name: "tern-jobs", consumer: handleJobs });
    const jobsEnv = { ...(env as Env), DB: flakyDb({ on: true }) };
    const itemId = await storedLike();
    const sim = await runFor(3, jobsEnv, Date.now(), q);
    expect(inboxRuns(sim.bodies)).toBe(MAX_EFFECT_ATTEMPTS);
    expect(await inboxDeadLetters()).toBe(1);
    expect(await itemExists(itemId)).toBe(true);
  });

  it("D1 back after a few minutes: the runner's retry processes the item once, and the sweep finds nothing", async () => {
    const q = simulatedQueue<JobMessage>({ binding: env.JOBS, name: "tern-jobs", consumer: handleJobs });
    const down = { on: true };
    const jobsEnv = { ...(env as Env), DB: flakyDb(down) };
    const itemId = await storedLike();
    const receivedAt = Date.now();
    await runHere(createDb(jobsEnv.DB), jobsEnv, { type: "effects", origin: ORIGIN, effects: [{ type: "inbox", itemId, origin: ORIGIN }] });
    await q.drain({ until: 200, env: jobsEnv });
    down.on = false;
    const sim = await runFor(1, jobsEnv, receivedAt, q);
    expect(await itemExists(itemId)).toBe(false);
    expect(await inboxDeadLetters()).toBe(0);
    // The first run and the runner's retries at 15 s, 45 s and 105 s failed; the one at 225 s processed it.
    expect(1 + inboxRuns(sim.bodies)).toBe(5);
  });
});
