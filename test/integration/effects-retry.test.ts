// One retry owner per kind of work (src/effects/retry.ts): a push owns its tries, the runner owns every other effect's,
// and the queue's own retries are left for crashes. Each failure kind of a dependency (a thrown fetch as on a DNS
// failure, a push service that hangs, 5xx, 4xx, an error in our own code, D1 refusing a statement) is driven through
// the real consumer (handleJobs) on a simulated queue with a clock, which honours delays, ack, retry, max_retries and
// the dead-letter queue as Cloudflare Queues do. Counted: the runs, the requests, the dead letters.
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { handleJobs } from "../../src/background/effects-runner";
import { effectRetryDelay, MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import type { Effect, JobMessage } from "../../src/effects/types";
import type { Env } from "../../src/env";
import { CIRCUIT_THRESHOLD } from "../../src/federation/outbound/circuits";
import { padId } from "../../src/lib/text/ids";
import { FAILING_SUBSCRIPTION_MS, MAX_PUSH_ATTEMPTS } from "../../src/push";
import { issueToken } from "../../src/services/auth/tokens";
import { api, db, makeApp, makeUser, type TestUser } from "./helpers";
import { makePushClient } from "./push-fixtures";
import { simulatedQueue as simulatedJobsQueue } from "./simulated-queue";

/** The JOBS queue with a clock, through the real consumer (./simulated-queue.ts). */
const simulatedQueue = () => simulatedJobsQueue<JobMessage>({ binding: env.JOBS, name: "tern-jobs", consumer: handleJobs });

const effectsOf = (m: JobMessage): Effect[] => (m.type === "effects" ? m.effects : [m]);
const pushRuns = (bodies: JobMessage[]) => bodies.flatMap(effectsOf).filter((e) => e.type === "push").length;

/** Requests to push.example, answered by `answer` (a thrown fetch, a hang that honours the abort, a status). */
function pushService(answer: "throw" | "hang" | number) {
  const seen = { requests: 0 };
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== "push.example") return real(input, init);
    seen.requests++;
    if (answer === "throw") throw new TypeError("fetch failed: getaddrinfo ENOTFOUND push.example");
    if (answer === "hang") return new Promise<Response>(() => {});
    return new Response("", { status: answer });
  });
  return seen;
}

/** The same user signed in with another app (one subscription per token). */
async function anotherToken(u: TestUser): Promise<TestUser> {
  const app = await makeApp();
  const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["read", "write", "push"], reuse: false });
  return { ...u, token: t.accessToken, api: api(t.accessToken) };
}

let seq = 0;
async function subscribe(u: TestUser, alerts: Record<string, boolean> = { follow: true, mention: true, status: true }) {
  const client = await makePushClient();
  const res = await u.api.post("/api/v1/push/subscription", {
    subscription: { endpoint: `https://push.example/sub/${++seq}`, keys: { p256dh: client.p256dh, auth: client.auth }, standard: true },
    data: { alerts, policy: "all" },
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const subscriptionExists = async (id: string) => !!(await env.DB.prepare("SELECT 1 AS x FROM web_push_subscriptions WHERE id = ?").bind(padId(id)).first());
const deadLetters = async () =>
  (await env.DB.prepare("SELECT body, attempts FROM dead_letters WHERE queue = 'tern-jobs'").all<{ body: string; attempts: number }>()).results;

beforeEach(async () => {
  // Circuits are per push host: each test starts with push.example's closed.
  await env.DB.prepare("DELETE FROM delivery_circuits").run();
});
afterEach(() => vi.restoreAllMocks());

describe("a push owns its retries", () => {
  for (const failure of ["throw", "hang", 503] as const) {
    it(`a push service that ${failure === "throw" ? "cannot be resolved (the fetch throws)" : failure === "hang" ? "never answers" : "answers 503"} is tried ${MAX_PUSH_ATTEMPTS} times in all, once per attempt, with growing delays`, async () => {
      const q = simulatedQueue();
      const service = pushService(failure);
      const target = await makeUser();
      const sub = await subscribe(target);
      const follower = await makeUser();
      expect((await follower.api.post(`/api/v1/accounts/${target.id}/follow`)).status).toBe(200);
      const sim = await q.drain({ env: { ...(env as Env), PUSH_TIMEOUT_MS: "50" } });
      // Each attempt ran the push once and made one request; the queue's own retries were never used.
      expect(pushRuns(sim.bodies)).toBe(MAX_PUSH_ATTEMPTS);
      expect(service.requests).toBe(MAX_PUSH_ATTEMPTS);
      expect(sim.queueRetries).toBe(0);
      expect(sim.deadLetterQueue).toBe(0);
      expect(sim.runs).toBeLessThanOrEqual(MAX_PUSH_ATTEMPTS + 2);
      // The retries waited: 16 s, 31 s, 96 s, 271 s, 640 s at least (Sidekiq's schedule).
      expect(sim.now).toBeGreaterThanOrEqual(16 + 31 + 96 + 271 + 640);
      // Failing for minutes, not days: the subscription stays, marked.
      expect(await subscriptionExists(sub)).toBe(true);
    });
  }

  it("a push service answering 410 gets one request; the subscription is deleted and nothing is retried", async () => {
    const q = simulatedQueue();
    const service = pushService(410);
    const target = await makeUser();
    const sub = await subscribe(target);
    await (await makeUser()).api.post(`/api/v1/accounts/${target.id}/follow`);
    const sim = await q.drain();
    expect(service.requests).toBe(1);
    expect(pushRuns(sim.bodies)).toBe(1);
    expect(await subscriptionExists(sub)).toBe(false);
  });

  it("an error in our own code (a subscription key that is no curve point) is retried as the push's own attempts, no more", async () => {
    const q = simulatedQueue();
    const service = pushService(201);
    const target = await makeUser();
    const sub = await subscribe(target);
    await env.DB.prepare("UPDATE web_push_subscriptions SET key_p256dh = ? WHERE id = ?")
      .bind(`B${"A".repeat(86)}`, padId(sub))
      .run();
    await (await makeUser()).api.post(`/api/v1/accounts/${target.id}/follow`);
    const sim = await q.drain();
    expect(pushRuns(sim.bodies)).toBe(MAX_PUSH_ATTEMPTS);
    expect(service.requests).toBe(0);
    expect(sim.queueRetries).toBe(0);
  });

  it(`a push host failing ${CIRCUIT_THRESHOLD} times in a row opens its circuit: later pushes spend an attempt without a request`, async () => {
    const q = simulatedQueue();
    const service = pushService("throw");
    const target = await makeUser();
    const subs = CIRCUIT_THRESHOLD + 5;
    for (let i = 0; i < subs; i++) await subscribe(await anotherToken(target));
    await (await makeUser()).api.post(`/api/v1/accounts/${target.id}/follow`);
    const sim = await q.drain({ until: 0 });
    expect(pushRuns(sim.bodies)).toBe(subs);
    expect(service.requests).toBe(CIRCUIT_THRESHOLD);
    // Every push is still bounded by its own attempts, the circuit's included.
    const all = await q.drain();
    expect(pushRuns(all.bodies)).toBe(subs * MAX_PUSH_ATTEMPTS);
    expect(all.queueRetries).toBe(0);
  });

  it("a subscription whose pushes have failed for three days is deleted at its next failure, without further retries", async () => {
    const q = simulatedQueue();
    const service = pushService("throw");
    const target = await makeUser();
    const sub = await subscribe(target);
    await env.DB.prepare("UPDATE web_push_subscriptions SET failing_since = ? WHERE id = ?")
      .bind(Date.now() - FAILING_SUBSCRIPTION_MS - 1000, padId(sub))
      .run();
    await (await makeUser()).api.post(`/api/v1/accounts/${target.id}/follow`);
    const sim = await q.drain();
    expect(service.requests).toBe(1);
    expect(pushRuns(sim.bodies)).toBe(1);
    expect(await subscriptionExists(sub)).toBe(false);
  });

  it("a push that gets through clears its subscription's failure mark", async () => {
    const q = simulatedQueue();
    pushService(201);
    const target = await makeUser();
    const sub = await subscribe(target);
    await env.DB.prepare("UPDATE web_push_subscriptions SET failing_since = ? WHERE id = ?")
      .bind(Date.now() - 1000, padId(sub))
      .run();
    await (await makeUser()).api.post(`/api/v1/accounts/${target.id}/follow`);
    await q.drain();
    const row = await env.DB.prepare("SELECT failing_since FROM web_push_subscriptions WHERE id = ?")
      .bind(padId(sub))
      .first<{ failing_since: number | null }>();
    expect(row).toEqual({ failing_since: null });
  });
});

describe("the runner owns every other effect's retries", () => {
  it(`an effect that throws in our own code runs ${MAX_EFFECT_ATTEMPTS} times with backoff, then is dead-lettered once; the queue never retries it`, async () => {
    const q = simulatedQueue();
    const before = (await deadLetters()).length;
    // keys: null makes deleteStored throw a TypeError (our code, not a dependency).
    await env.JOBS.send({ type: "effects", effects: [{ type: "delete_media", keys: null as unknown as string[] }] });
    const sim = await q.drain();
    expect(sim.runs).toBe(MAX_EFFECT_ATTEMPTS);
    expect(sim.queueRetries).toBe(0);
    expect(sim.deadLetterQueue).toBe(0);
    const letters = (await deadLetters()).slice(before);
    expect(letters).toHaveLength(1);
    expect(letters[0]?.attempts).toBe(MAX_EFFECT_ATTEMPTS);
    expect(JSON.parse(letters[0]?.body ?? "{}").effects).toEqual([{ type: "delete_media", keys: null }]);
    let waited = 0;
    for (let a = 1; a < MAX_EFFECT_ATTEMPTS; a++) waited += effectRetryDelay(a, () => 0);
    expect(sim.now).toBeGreaterThanOrEqual(waited);
  });

  it("an effect whose D1 statement fails is retried alone until D1 answers: the pack's other effect ran once", async () => {
    const q = simulatedQueue();
    const author = await makeUser();
    const posted = await author.api.post("/api/v1/statuses", { status: "fan me out" });
    expect(posted.status).toBe(200);
    q.held.length = 0;
    q.sim.bodies.length = 0;
    // The feed regeneration's statement fails while its state table is away (D1 refusing it); the notify does not.
    const other = await makeUser();
    await env.DB.prepare("ALTER TABLE feed_states RENAME TO feed_states_away").run();
    await env.JOBS.send({
      type: "effects",
      effects: [
        { type: "delete_media", keys: [] },
        { type: "regenerate_feed", accountId: other.id },
      ],
    });
    const sim = await q.drain({
      after: async () => {
        if (q.sim.runs === 3) await env.DB.prepare("ALTER TABLE feed_states_away RENAME TO feed_states").run();
      },
    });
    const ran = sim.bodies.flatMap(effectsOf);
    expect(ran.filter((e) => e.type === "delete_media")).toHaveLength(1);
    // Runs 1 to 3 failed (the pack, then two retries of the regeneration alone); the fourth succeeded.
    expect(ran.filter((e) => e.type === "regenerate_feed")).toHaveLength(4);
    expect(sim.bodies.slice(1).every((b) => b.type === "effects" && b.effects.length === 1 && b.effects[0]?.type === "regenerate_feed")).toBe(true);
    expect(sim.queueRetries).toBe(0);
    expect(q.held).toHaveLength(0);
  });
});

describe("other work keeps flowing while pushes fail", () => {
  it("a post's fan-out reaches its followers in the first round while 50 push subscriptions fail", async () => {
    const q = simulatedQueue();
    const service = pushService("throw");
    const author = await makeUser();
    const followers: TestUser[] = [];
    for (let i = 0; i < 50; i++) {
      const f = await makeUser();
      await subscribe(f);
      expect((await f.api.post(`/api/v1/accounts/${author.id}/follow`, { notify: true })).status).toBe(200);
      followers.push(f);
    }
    await q.drain();
    q.sim.bodies.length = 0;
    const requestsBefore = service.requests;
    const posted = await author.api.post("/api/v1/statuses", { status: "for my followers" });
    expect(posted.status).toBe(200);
    // What is due now runs; the failing pushes' retries wait for their delays.
    const sim = await q.drain({ until: q.sim.now });
    for (const f of followers) {
      const home = await f.api.get("/api/v1/timelines/home");
      expect(home.body.map((s: { id: string }) => s.id)).toContain(posted.body.id);
    }
    expect(sim.bodies.flatMap(effectsOf).filter((e) => e.type === "fanout")).toHaveLength(1);
    // 50 bell notifications, each a push that failed once (a request, or an attempt spent on the open circuit).
    expect(pushRuns(sim.bodies)).toBe(50);
    expect(service.requests - requestsBefore).toBeLessThanOrEqual(CIRCUIT_THRESHOLD);
    expect(q.held.length).toBeGreaterThan(0);
    expect(q.held.every((h) => h.due > q.sim.now)).toBe(true);
    expect(sim.queueRetries).toBe(0);
  });
});
