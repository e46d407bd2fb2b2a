// One retry owner for deliveries (src/effects/retry.ts): src/federation/outbound/delivery.ts owns a delivery's tries
// (MAX_ATTEMPTS, n⁴ + 15 s, Retry-After, a per-host circuit, hosts unavailable after 7 days of failures), and the
// DELIVERY queue's own retries (max_retries, then the dead-letter queue) are left for an invocation that crashed. Each
// failure kind of a remote inbox (a thrown fetch as on a DNS failure, a server that never answers, 5xx, 4xx, 429 with
// Retry-After) and of our own side (a signer key we cannot use, D1 refusing a statement, the queue refusing a retry) is
// driven through the real consumer (handleDeliveries) on a simulated queue with a clock (./simulated-queue.ts). Counted:
// the requests per inbox and activity, the runs, the queue's own retries. Another host in the same pack, and in later
// packs, is delivered on its first run while one fails. federation-delivery.test.ts and federation-circuit.test.ts
// test one message at a time (what is sent back, with which delay); this follows whole lifetimes.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { CIRCUIT_THRESHOLD } from "../../src/federation/outbound/circuits";
import { type DeliveryMessage, handleDeliveries, inboxesOf, MAX_ATTEMPTS, retryDelaySeconds } from "../../src/federation/outbound/delivery";
import { pad } from "./federation-inbox-fixtures";
import { addFollow, remoteAccount } from "./federation-outbound-fixtures";
import { makeUser, type TestUser } from "./helpers";
import { runQueuedJobs } from "./queues";
import { QUEUE_MAX_RETRIES, simulatedQueue } from "./simulated-queue";

/** The pack deadline in these tests (DELIVERY_TIMEOUT_MS is 30 s): a hung server costs 50 ms of real time. */
const TIMEOUT_MS = 50;

/**
 * The DELIVERY queue with a clock: the consumer's Date follows it (circuit cool-offs, failure days), from 01:00 UTC
 * today. Retry delays without jitter (Math.random 0), so that runs and days are the same on every run of the test.
 */
function deliveryQueue() {
  const t0 = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 3_600_000;
  vi.setSystemTime(t0);
  vi.spyOn(Math, "random").mockReturnValue(0);
  const q = simulatedQueue<DeliveryMessage>({
    binding: env.DELIVERY as Queue<DeliveryMessage>,
    name: "tern-delivery",
    consumer: (b, e) => handleDeliveries(b, e, TIMEOUT_MS),
    clock: (now) => vi.setSystemTime(t0 + now * 1000),
  });
  /** Moves the clock on to `seconds` (a later post), as time passes with nothing due. */
  const advance = (seconds: number) => {
    q.sim.now = Math.max(q.sim.now, seconds);
    vi.setSystemTime(t0 + q.sim.now * 1000);
  };
  return { ...q, advance };
}
type DeliveryQueue = ReturnType<typeof deliveryQueue>;

type Answer = "throw" | "hang" | number | { status: number; retryAfter: string };

interface Seen {
  host: string;
  /** The activity's id. */
  activity: string;
  /** The run (1, 2, …) that made the request. */
  run: number;
}

/** Remote inboxes by host, each answering as `answers` says (a function: its answer may change); counts requests. */
function network(q: DeliveryQueue, answers: Record<string, Answer | (() => Answer)>) {
  const seen: Seen[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const a = answers[url.host];
    if (a === undefined) throw new Error(`unexpected fetch of ${url.href}`);
    const body = typeof init?.body === "string" ? init.body : new TextDecoder().decode(init?.body as Uint8Array);
    seen.push({ host: url.host, activity: JSON.parse(body).id, run: q.sim.runs });
    const answer = typeof a === "function" ? a() : a;
    if (answer === "throw") throw new TypeError(`fetch failed: getaddrinfo ENOTFOUND ${url.host}`);
    if (answer === "hang") return new Promise<Response>(() => {});
    if (typeof answer === "number") return new Response(null, { status: answer });
    return new Response(null, { status: answer.status, headers: { "retry-after": answer.retryAfter } });
  });
  const requests = (host: string, activity?: Posted) => seen.filter((s) => s.host === host && (!activity || s.activity === activity.activityId));
  return { seen, requests };
}

let seq = 0;
/** A local user followed from each host (its shared inbox https://host/inbox). */
async function author(hosts: string[]): Promise<TestUser> {
  const u = await makeUser();
  for (const h of hosts) await addFollow((await remoteAccount(`fan${++seq}`, h)).id, u.id);
  return u;
}

interface Posted {
  outboxId: string;
  activityId: string;
}

/** A post by `u`, federated (the JOBS effects run): one delivery pack for its followers' inboxes, sent now. */
async function post(u: TestUser): Promise<Posted> {
  const res = await u.api.post("/api/v1/statuses", { status: `post ${++seq}` });
  expect(res.status).toBe(200);
  await runQueuedJobs();
  const row = await env.DB.prepare("SELECT id, json FROM activity_outbox WHERE account_id = ? ORDER BY id DESC LIMIT 1")
    .bind(pad(u.id))
    .first<{ id: string; json: string }>();
  return { outboxId: String(BigInt(row!.id)), activityId: JSON.parse(row!.json).id };
}

const inbox = (host: string) => `https://${host}/inbox`;
/** The runs (1, 2, …) whose message held `host`'s inbox for `p`. */
const runsFor = (q: DeliveryQueue, p: Posted, host: string) =>
  q.sim.bodies.flatMap((b, i) => (String(BigInt(b.outboxId)) === p.outboxId && inboxesOf(b).includes(inbox(host)) ? [i + 1] : []));
/** The attempt numbers of `host`'s messages for `p`, in run order. */
const attemptsFor = (q: DeliveryQueue, p: Posted, host: string) =>
  q.sim.bodies.filter((b) => String(BigInt(b.outboxId)) === p.outboxId && inboxesOf(b).includes(inbox(host))).map((b) => b.attempt);

/** `host` got `p` once, on the first run of its pack, which nothing ran again. */
function deliveredOnFirstRun(q: DeliveryQueue, net: ReturnType<typeof network>, p: Posted, host: string) {
  const runs = runsFor(q, p, host);
  expect(runs).toHaveLength(1);
  expect(net.requests(host, p).map((s) => s.run)).toEqual(runs);
}

const failureDays = async (host: string) =>
  (await env.DB.prepare("SELECT day FROM delivery_failures WHERE host = ?").bind(host).all<{ day: string }>()).results.map((r) => r.day);
const unavailable = async (host: string) => !!(await env.DB.prepare("SELECT 1 AS x FROM unavailable_domains WHERE domain = ?").bind(host).first());
const circuitOf = (host: string) =>
  env.DB.prepare("SELECT consecutive_failures AS n, open_until AS until FROM delivery_circuits WHERE host = ?")
    .bind(host)
    .first<{ n: number; until: number | null }>();

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Seconds a delivery's retries wait at least, from its first attempt to its last (jitter at 0). */
const LEAST_SCHEDULE = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => retryDelaySeconds(i + 1, () => 0)).reduce((a, b) => a + b, 0);

describe("a failing remote inbox is tried MAX_ATTEMPTS times, by the delivery alone", () => {
  const kinds: [string, Answer, number][] = [
    ["cannot be resolved (the fetch throws)", "throw", LEAST_SCHEDULE],
    ["never answers (the pack deadline)", "hang", LEAST_SCHEDULE],
    ["answers 503", 503, LEAST_SCHEDULE],
    ["answers 429 with Retry-After: 600", { status: 429, retryAfter: "600" }, (MAX_ATTEMPTS - 1) * 600],
  ];
  for (const [what, answer, least] of kinds) {
    it(`an inbox that ${what}: ${MAX_ATTEMPTS} requests, one a run, with the schedule's delays; the pack's other host and a later pack are delivered on their first run`, async () => {
      const q = deliveryQueue();
      const net = network(q, { "bad.example": answer, "good.example": 202 });
      const u = await author(["bad.example", "good.example"]);
      const first = await post(u);
      // A second post once the bad host's circuit has opened (its 10th failure), while the first is still retried.
      let second: Posted | null = null;
      await q.drain({
        after: async () => {
          if (!second && net.requests("bad.example").length === CIRCUIT_THRESHOLD) second = await post(u);
        },
      });
      expect(second).not.toBeNull();
      const later = second as unknown as Posted;

      // The first activity: one request a run, MAX_ATTEMPTS runs, attempts 0..15 once each, with growing delays.
      expect(net.requests("bad.example", first)).toHaveLength(MAX_ATTEMPTS);
      expect(attemptsFor(q, first, "bad.example")).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i));
      const lastRun = (net.requests("bad.example", first).at(-1) as Seen).run;
      expect(lastRun).toBeGreaterThan(0);
      expect(q.sim.now).toBeGreaterThanOrEqual(least);
      // The second met the open circuit: held without a request, then tried; never more than MAX_ATTEMPTS requests.
      expect(net.requests("bad.example", later).length).toBeGreaterThan(0);
      expect(net.requests("bad.example", later).length).toBeLessThanOrEqual(MAX_ATTEMPTS);
      expect(runsFor(q, later, "bad.example").length).toBeLessThanOrEqual(MAX_ATTEMPTS + 1);
      // The good host: each activity once, on its pack's first run.
      deliveredOnFirstRun(q, net, first, "good.example");
      deliveredOnFirstRun(q, net, later, "good.example");
      // No queue-level retries: nothing crashed.
      expect(q.sim.crashes).toBe(0);
      expect(q.sim.queueRetries).toBe(0);
      expect(q.sim.deadLetterQueue).toBe(0);
      // The failure is counted once a day for the host, and the good host carries no record.
      expect(await failureDays("bad.example")).toHaveLength(1);
      expect(await unavailable("bad.example")).toBe(false);
      expect(await failureDays("good.example")).toEqual([]);
      expect(await circuitOf("good.example")).toBeNull();
    });
  }

  it("4xx: one request and no retry (a 400 is knocked once more, signed the other way); nothing is counted against the hosts", async () => {
    const q = deliveryQueue();
    const statuses = [400, 403, 404, 410, 422];
    const hosts = statuses.map((s) => `s${s}.example`);
    const net = network(q, { ...Object.fromEntries(statuses.map((s) => [`s${s}.example`, s])), "good.example": 202 });
    const u = await author([...hosts, "good.example"]);
    const p = await post(u);
    const sim = await q.drain();
    expect(sim.runs).toBe(1);
    for (const h of hosts) expect(net.requests(h, p)).toHaveLength(h === "s400.example" ? 2 : 1);
    deliveredOnFirstRun(q, net, p, "good.example");
    expect(sim.crashes + sim.queueRetries).toBe(0);
    for (const h of hosts) {
      expect(await failureDays(h)).toEqual([]);
      expect(await circuitOf(h)).toBeNull();
    }
  });

  it("an error in our own code (a signer key that does not import): bounded by MAX_ATTEMPTS, no request, and not counted against the host", async () => {
    const q = deliveryQueue();
    const net = network(q, { "peer.example": 202 });
    const broken = await author(["peer.example"]);
    const healthy = await author(["peer.example"]);
    await env.DB.prepare("INSERT OR REPLACE INTO account_keys (account_id, private_key_pem) VALUES (?, ?)")
      .bind(pad(broken.id), "-----BEGIN PRIVATE KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEA\n-----END PRIVATE KEY-----")
      .run();
    const bad = await post(broken);
    // Once the broken signer has failed more than CIRCUIT_THRESHOLD times, a healthy signer posts to the same host.
    let good: Posted | null = null;
    await q.drain({
      after: async () => {
        if (!good && runsFor(q, bad, "peer.example").length === CIRCUIT_THRESHOLD + 1) good = await post(healthy);
      },
    });
    expect(good).not.toBeNull();
    expect(net.requests("peer.example", bad)).toEqual([]);
    expect(runsFor(q, bad, "peer.example").length).toBeLessThanOrEqual(MAX_ATTEMPTS);
    expect(q.sim.crashes + q.sim.queueRetries).toBe(0);
    // Our failure is ours: the host's circuit never opened, the healthy signer got through at once, no failure day.
    deliveredOnFirstRun(q, net, good as unknown as Posted, "peer.example");
    expect(await failureDays("peer.example")).toEqual([]);
  });
});

describe("the circuit bounds a host that never recovers", () => {
  it(`${CIRCUIT_THRESHOLD + 2} activities to a host that is down: each at most ${MAX_ATTEMPTS} requests and ${MAX_ATTEMPTS + 1} runs, held messages do not spin`, async () => {
    const q = deliveryQueue();
    const net = network(q, { "down.example": 503, "good.example": 202 });
    const u = await author(["down.example", "good.example"]);
    const posts: Posted[] = [];
    for (let i = 0; i < CIRCUIT_THRESHOLD + 2; i++) posts.push(await post(u));
    const sim = await q.drain({ maxRuns: 20_000 });
    expect(q.held).toHaveLength(0);
    for (const p of posts) {
      expect(net.requests("down.example", p).length).toBeLessThanOrEqual(MAX_ATTEMPTS);
      expect(runsFor(q, p, "down.example").length).toBeLessThanOrEqual(MAX_ATTEMPTS + 1);
      deliveredOnFirstRun(q, net, p, "good.example");
    }
    expect(sim.runs).toBeLessThanOrEqual(posts.length * (MAX_ATTEMPTS + 1));
    expect(sim.crashes + sim.queueRetries).toBe(0);
    expect((await failureDays("down.example")).length).toBeGreaterThan(0);
  });

  it("a host down for good is marked unavailable after failures on 7 days; from then on it gets no message at all", async () => {
    const q = deliveryQueue();
    const net = network(q, { "gone.example": "throw", "good.example": 202 });
    const u = await author(["gone.example", "good.example"]);
    const DAY = 86_400;
    const posts: Posted[] = [];
    let unavailableFrom = -1;
    for (let d = 0; d < 12; d++) {
      q.advance(d * DAY + 3600);
      posts.push(await post(u));
      await q.drain({ until: (d + 1) * DAY });
      if (unavailableFrom < 0 && (await unavailable("gone.example"))) unavailableFrom = d + 1;
    }
    await q.drain();
    expect(unavailableFrom).toBeGreaterThan(0);
    // Messages already under way when it was marked go on to their last attempt (a success would bring it back).
    expect((await failureDays("gone.example")).length).toBeGreaterThanOrEqual(7);
    for (const [d, p] of posts.entries()) {
      expect(net.requests("gone.example", p).length).toBeLessThanOrEqual(MAX_ATTEMPTS);
      // Posted once the host was unavailable: not even queued for it.
      if (d >= unavailableFrom) expect(runsFor(q, p, "gone.example")).toEqual([]);
      deliveredOnFirstRun(q, net, p, "good.example");
    }
    expect(q.sim.crashes + q.sim.queueRetries).toBe(0);
  });
});

describe("the queue's own retries are for a crashed invocation, bounded by max_retries", () => {
  it("D1 refusing the batch state (a table it reads is away): the queue retries the pack, no request is made, then the dead-letter queue", async () => {
    const q = deliveryQueue();
    const net = network(q, { "bad.example": 503, "good.example": 202 });
    const u = await author(["bad.example", "good.example"]);
    const p = await post(u);
    await env.DB.prepare("ALTER TABLE delivery_failures RENAME TO delivery_failures_away").run();
    try {
      const sim = await q.drain();
      expect(sim.runs).toBe(QUEUE_MAX_RETRIES + 1);
      expect(sim.crashes).toBe(QUEUE_MAX_RETRIES + 1);
      expect(sim.queueRetries).toBe(QUEUE_MAX_RETRIES);
      expect(sim.deadLetterQueue).toBe(1);
      expect(sim.deadLettered.map((b) => String(BigInt(b.outboxId)))).toEqual([p.outboxId]);
      expect(net.seen).toEqual([]);
    } finally {
      await env.DB.prepare("ALTER TABLE delivery_failures_away RENAME TO delivery_failures").run();
    }
  });

  it("D1 back after two crashes: the pack then runs as usual, each host tried by the delivery's own schedule", async () => {
    const q = deliveryQueue();
    const net = network(q, { "bad.example": 503, "good.example": 202 });
    const u = await author(["bad.example", "good.example"]);
    const p = await post(u);
    await env.DB.prepare("ALTER TABLE delivery_failures RENAME TO delivery_failures_away").run();
    const sim = await q.drain({
      after: async () => {
        if (q.sim.crashes === 2 && q.sim.runs === 2) await env.DB.prepare("ALTER TABLE delivery_failures_away RENAME TO delivery_failures").run();
      },
    });
    expect(sim.crashes).toBe(2);
    expect(sim.deadLetterQueue).toBe(0);
    expect(net.requests("good.example", p)).toHaveLength(1);
    expect(net.requests("bad.example", p)).toHaveLength(MAX_ATTEMPTS);
    expect(attemptsFor(q, p, "bad.example")).toEqual([0, 0, 0, ...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => i + 1)]);
  });

  it("D1 refusing what is written after the requests (the circuit count): not a crash; the retry still goes, the pack's other host is not sent again", async () => {
    const q = deliveryQueue();
    const net = network(q, { "bad.example": 503, "good.example": 202 });
    const u = await author(["bad.example", "good.example"]);
    const p = await post(u);
    const refusing = new Proxy(env.DB, {
      get(target, key) {
        if (key === "prepare")
          return (query: string) => {
            const st = target.prepare(query);
            if (!/^insert into "?delivery_circuits"?/i.test(query.trim())) return st;
            const fail = async () => {
              throw new Error("D1_ERROR: Network connection lost.");
            };
            return new Proxy(st, {
              get(s, k) {
                if (k === "bind")
                  return (...args: unknown[]) =>
                    new Proxy(s.bind(...args), { get: (b, kk) => (["run", "all", "raw", "first"].includes(String(kk)) ? fail : Reflect.get(b, kk)) });
                if (["run", "all", "raw", "first"].includes(String(k))) return fail;
                const v = Reflect.get(s, k);
                return typeof v === "function" ? v.bind(s) : v;
              },
            });
          };
        const v = Reflect.get(target, key);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const sim = await q.drain({ env: { ...(env as Env), DB: refusing } });
    expect(sim.crashes + sim.queueRetries).toBe(0);
    expect(net.requests("bad.example", p)).toHaveLength(MAX_ATTEMPTS);
    deliveredOnFirstRun(q, net, p, "good.example");
  });

  it("the queue refusing every retry: the pack goes back through the queue's own retry, at most max_retries times, then the dead-letter queue", async () => {
    const q = deliveryQueue();
    const net = network(q, { "bad.example": 503, "good.example": 202 });
    const u = await author(["bad.example", "good.example"]);
    const p = await post(u);
    const refuse = async () => {
      throw new Error("Queue send failed: internal error");
    };
    vi.spyOn(env.DELIVERY, "send").mockImplementation(refuse);
    vi.spyOn(env.DELIVERY, "sendBatch").mockImplementation(refuse);
    const sim = await q.drain();
    expect(sim.runs).toBe(QUEUE_MAX_RETRIES + 1);
    expect(sim.crashes).toBe(QUEUE_MAX_RETRIES + 1);
    expect(sim.deadLetterQueue).toBe(1);
    // Each run of the pack made its requests again (the failing host's until its circuit opened): bounded by the
    // queue's retries, below MAX_ATTEMPTS. The other host got the activity on each run (receivers take it once by id).
    expect(net.requests("bad.example", p).length).toBeLessThanOrEqual(QUEUE_MAX_RETRIES + 1);
    expect(net.requests("good.example", p)).toHaveLength(QUEUE_MAX_RETRIES + 1);
    expect(QUEUE_MAX_RETRIES + 1).toBeLessThanOrEqual(MAX_ATTEMPTS);
  });

  it("the queue refusing one retry send of a pack with two failing hosts: one crash, and each host keeps ONE line of attempts (no fork)", async () => {
    const q = deliveryQueue();
    const net = network(q, { "bad1.example": 503, "bad2.example": "throw", "good.example": 202 });
    const u = await author(["bad1.example", "bad2.example", "good.example"]);
    const p = await post(u);
    let refusals = 1;
    const send = env.DELIVERY.send as unknown as ReturnType<typeof vi.fn>;
    const sendBatch = env.DELIVERY.sendBatch as unknown as ReturnType<typeof vi.fn>;
    const realSend = send.getMockImplementation() as (...a: unknown[]) => Promise<unknown>;
    const realBatch = sendBatch.getMockImplementation() as (...a: unknown[]) => Promise<unknown>;
    send.mockImplementation(async (...a: unknown[]) => {
      if (refusals-- > 0) throw new Error("Queue send failed: internal error");
      return realSend(...a);
    });
    sendBatch.mockImplementation(async (...a: unknown[]) => {
      if (refusals-- > 0) throw new Error("Queue send failed: internal error");
      return realBatch(...a);
    });
    const sim = await q.drain();
    expect(sim.crashes).toBe(1);
    expect(sim.deadLetterQueue).toBe(0);
    for (const h of ["bad1.example", "bad2.example"]) {
      // The crashed run's attempt 0 is made again by the queue's retry; then attempts 1..15, each once.
      expect(attemptsFor(q, p, h)).toEqual([0, 0, ...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => i + 1)]);
      expect(net.requests(h, p)).toHaveLength(MAX_ATTEMPTS + sim.crashes);
    }
    expect(net.requests("good.example", p)).toHaveLength(1 + sim.crashes);
  });
});
