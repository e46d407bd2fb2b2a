// `npm run bench:streaming`: 1,000 open WebSockets against a throwaway local Tern (`wrangler dev`, loopback), and the
// time from `POST /api/v1/statuses` returning to the `update` event arriving on every socket, for
//   user         1,000 followers of the poster, each with one `user` socket (fan-out to 1,000 account hubs);
//   public       1,000 signed-out sockets on `public:local` (one shared stream; they sit in the 8 `anon:<n>` hubs);
//   public-auth  the 1,000 followers on `public:local` instead (the shared stream reaching 1,000 account hubs);
//   notify       the 1,000 followers on `user:notification`, each having asked to be notified of the poster's posts
//                (one `status` notification each per post; timed to the `notification` event);
// with Worker CPU per published event (workerd's runtime process, from /proc, as bench/run.mjs reads it), a
// no-listener baseline (the same POSTs with nobody connected: the POST and its home-feed fan-out only), and the
// hibernation evidence: the hubs' sockets left idle with text `ping`s that the runtime answers itself, workerd CPU
// over that time, and what woke up for the next event; then the before/after comparison of rendering once per event
// (bench/streaming-compare.mjs: `user` streams at 1, 100 and 1,000 online followers on another commit's src/ and on
// this tree, side by side in the run, ratios with ✓/✗ against issue 34's goals). Prints figures; asserts nothing.
// Design: docs/architecture.md "Streaming (as built)"; figures and how to read them: bench/README.md ("Streaming").
// Options: --sockets=N --posts=N --warmup=N --idle=S --ping-for=S --ping-every=S --concurrency=N
// --only=user,public,public-auth,notify,compare --compare-sizes=1,100,1000 --before=<commit> --keep --log.
import { appendFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { clockTickMs, cpuMs, cpuSupported, workerdPids } from "./cpu.mjs";
import { idGen, insertAppTokens, insertLocalUsers, loadSeed, pad, SqlWriter, sha256, unpad } from "./seed.mjs";
import { startBenchServer, root } from "./server.mjs";
import { BEFORE_COMMIT, comparisonGoals, formatComparison, runComparison } from "./streaming-compare.mjs";

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const SOCKETS = Number(opt("sockets") ?? 1000);
const POSTS = Number(opt("posts") ?? 5); // measured events per scenario (after WARMUP)
const WARMUP = Number(opt("warmup") ?? 2);
const IDLE_S = Number(opt("idle") ?? 20); // quiet seconds, sampled in QUIET_WINDOW_S windows
const QUIET_WINDOW_S = 5;
const PING_FOR_S = Number(opt("ping-for") ?? 10);
const PING_EVERY_S = Number(opt("ping-every") ?? 2.5);
const CONCURRENCY = Number(opt("concurrency") ?? 50);
const EVENT_TIMEOUT_MS = 60_000;
/** No queue batch running or finished for this long while sockets wait for an event: the local broker is stuck. */
const KICK_AFTER_MS = 3000;
// `notify` last: it turns on notify for every follow (each post then raises 1,000 notifications), which would change
// the work behind the scenarios after it.
const ALL_SCENARIOS = ["user", "public", "public-auth", "notify"];
const only = opt("only")?.split(",") ?? [...ALL_SCENARIOS, "compare"];
/** The before/after comparison (bench/streaming-compare.mjs): online followers per size, and the "before" commit. */
const COMPARE_SIZES = (opt("compare-sizes") ?? "1,100,1000")
  .split(",")
  .map(Number)
  .filter((n) => n > 0 && n <= SOCKETS);
const BEFORE_REV = opt("before") ?? BEFORE_COMMIT;
/** The scenario whose sockets are left idle afterwards (account hubs when there are any). */
const HIBERNATION_ON = ALL_SCENARIOS.find((k) => only.includes(k) && k !== "public") ?? "public";
/** Tern's fan-out takes followers this many at a time; each further chunk is another trip through the JOBS queue. */
const FANOUT_CHUNK = 500;
/** Batches one status's fan-out takes with SOCKETS followers (the last one finds nobody when SOCKETS is a multiple). */
const FANOUT_BATCHES = Math.floor(SOCKETS / FANOUT_CHUNK) + 1;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error("[bench:streaming]", ...a);
/** Wall clock in ms with sub-ms precision, comparable with the Worker's Date.now() (same machine, same clock). */
const now = () => performance.timeOrigin + performance.now();

// ---- seed: a poster, SOCKETS followers, one token each, written straight into D1 (no sign-up, no rate limit) ----

function buildStreamingSeed({ origin, followers, at = Date.now() }) {
  const w = new SqlWriter();
  const accId = idGen();
  const userId = idGen();
  const start = at - 86_400_000;
  const accounts = [];
  for (let i = 0; i <= followers; i++) {
    const username = i === 0 ? "poster" : `listener${String(i).padStart(4, "0")}`;
    accounts.push({ id: accId(start + i), userId: userId(start + i), username });
  }
  insertLocalUsers(w, origin, accounts, start, at);
  // Follows in listener order (fan-out walks follows.id), so listener i is in fan-out chunk floor((i-1) / 500).
  const followId = idGen();
  w.insert(
    "follows",
    ["id", "account_id", "target_account_id", "show_reblogs", "notify", "created_at"],
    accounts.slice(1).map((a) => [pad(followId(start + 1000)), pad(a.id), pad(accounts[0].id), 1, 0, start + 1000]),
  );
  const tokens = accounts.map((a, i) => `bench-streaming-${i}-${sha256(`${a.id}:${at}`).slice(0, 32)}`);
  insertAppTokens(w, {
    name: "Tern streaming bench",
    clientId: "bench-streaming",
    clientSecret: "bench-streaming-secret",
    at: start,
    tokensAt: at - 1000,
    tokens: accounts.map((a, i) => ({ token: tokens[i], userId: a.userId })),
  });
  return {
    sql: w.toString(),
    poster: { accountId: unpad(accounts[0].id), token: tokens[0] },
    listeners: accounts.slice(1).map((a, i) => ({ accountId: unpad(a.id), token: tokens[i + 1] })),
  };
}

// ---- statistics ----

function pct(sorted, p) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
function summary(values) {
  const s = Float64Array.from(values).sort();
  return { n: s.length, p50: pct(s, 0.5), p95: pct(s, 0.95), p99: pct(s, 0.99), max: s.length ? s[s.length - 1] : NaN, min: s.length ? s[0] : NaN };
}
const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...String(r[i])].length)));
  return rows
    .map((r, ri) => {
      const line = r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ");
      return ri === 0 ? `${line}\n${widths.map((w) => "─".repeat(w)).join("  ")}` : line;
    })
    .join("\n");
}

// ---- sockets ----

/**
 * SOCKETS WebSockets and what arrives on them. Only the event name and the status id are read from a message, by
 * searching the raw bytes (no JSON.parse of 1,000 payloads per event): the harness shares 2 cores with workerd.
 */
class Fleet {
  /** `event`: the event each socket waits for per status, `update` or `notification` (of type status). */
  constructor(n, event = "update") {
    this.n = n;
    this.event = event;
    this.sockets = [];
    /** status id → { times: Float64Array(n) (NaN until it arrived), count, done: resolve fn } */
    this.events = new Map();
    this.pongs = 0;
    this.other = new Map(); // unexpected messages by kind (first sample kept)
    this.closed = 0;
    this.opened = 0;
    this.failed = [];
  }

  expect(id) {
    let e = this.events.get(id);
    if (!e) {
      e = { times: new Float64Array(this.n).fill(Number.NaN), count: 0, waiters: [] };
      this.events.set(id, e);
    }
    return e;
  }

  /** Resolves when every socket has the update for `id` (or after `ms`, with what arrived). */
  waitAll(id, ms = EVENT_TIMEOUT_MS) {
    const e = this.expect(id);
    if (e.count >= this.n) return Promise.resolve(e);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(e), ms);
      e.waiters.push(() => {
        clearTimeout(timer);
        resolve(e);
      });
    });
  }

  onMessage(i, data) {
    const t = now();
    const buf = /** @type {Buffer} */ (data);
    if (buf.length === 4 && buf.toString("latin1") === "pong") {
      this.pongs++;
      return;
    }
    const ev = buf.indexOf(this.event === "notification" ? '"event":"notification"' : '"event":"update"');
    if (ev < 0) {
      const k = buf.toString("utf8", 0, 80);
      const kind = k.replace(/\d+/g, "#");
      if (!this.other.has(kind)) this.other.set(kind, { n: 0, sample: k });
      this.other.get(kind).n++;
      return;
    }
    // The payload is the status JSON as a string; its first key is the id: "payload":"{\"id\":\"123…\"; a
    // notification's status is under "status" (the event is keyed by the status id either way).
    const key = this.event === "notification" ? '\\"status\\":{\\"id\\":\\"' : '\\"id\\":\\"';
    const at = buf.indexOf(key);
    if (at < 0) return;
    const end = buf.indexOf("\\", at + key.length);
    const id = buf.toString("latin1", at + key.length, end);
    const e = this.expect(id);
    if (!Number.isNaN(e.times[i])) return;
    e.times[i] = t;
    if (++e.count === this.n) for (const w of e.waiters.splice(0)) w();
  }

  /** Opens the sockets CONCURRENCY at a time; resolves when all are open (or failed). */
  async open(urlFor, headersFor) {
    let next = 0;
    const one = (i) =>
      new Promise((resolve) => {
        const ws = new WebSocket(urlFor(i), { headers: headersFor(i), perMessageDeflate: false });
        this.sockets[i] = ws;
        let settled = false;
        ws.on("open", () => {
          settled = true;
          this.opened++;
          resolve();
        });
        ws.on("message", (data) => this.onMessage(i, data));
        ws.on("unexpected-response", (_req, res) => {
          settled = true;
          this.failed.push(`socket ${i}: HTTP ${res.statusCode}`);
          resolve();
        });
        ws.on("error", (err) => {
          if (!settled) {
            settled = true;
            this.failed.push(`socket ${i}: ${err.message}`);
            resolve();
          }
        });
        ws.on("close", () => {
          this.closed++;
          if (!settled) {
            settled = true;
            this.failed.push(`socket ${i}: closed before open`);
            resolve();
          }
        });
      });
    const worker = async () => {
      while (next < this.n) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, this.n) }, worker));
  }

  live() {
    return this.sockets.filter((ws) => ws && ws.readyState === WebSocket.OPEN);
  }

  ping() {
    let sent = 0;
    for (const ws of this.live()) {
      ws.send("ping");
      sent++;
    }
    return sent;
  }

  async close() {
    const open = this.sockets.filter((ws) => ws && ws.readyState !== WebSocket.CLOSED);
    await Promise.all(
      open.map(
        (ws) =>
          new Promise((resolve) => {
            const t = setTimeout(() => {
              ws.terminate();
              resolve();
            }, 10_000);
            ws.once("close", () => {
              clearTimeout(t);
              resolve();
            });
            ws.close(1000);
          }),
      ),
    );
  }
}

// ---- main ----

/**
 * One bench server (a bundle of `entry`, its own state and seed: a poster and `followers` followers with tokens) and
 * the harness's helpers bound to it. bench/streaming.mjs runs one for the scenarios and, for the before/after
 * comparison, one per variant side by side.
 */
async function startHarness({ label = "", entry = join(root, "bench", "streaming-entry.js"), followers = SOCKETS, notes }) {
  let seed;
  const server = await startBenchServer({
    keep: flag("keep"),
    log: flag("log"),
    entry,
    seed: (persistTo, origin) => {
      seed = buildStreamingSeed({ origin, followers });
      const method = loadSeed({ persistDir: persistTo, sql: seed.sql, cwd: root, log });
      log(`seeded with ${method}`);
    },
  });
  log(`${label ? `${label}: ` : ""}bench server up at ${server.url}`);
  const wsBase = server.url.replace(/^http/, "ws");
  const canCpu = cpuSupported();
  const port = Number(new URL(server.url).port);
  const runtime = () => (canCpu ? workerdPids(server.pid, port) : []);
  const allWorkerd = () => (canCpu ? workerdPids(server.pid) : []);
  const cpuNow = () => {
    const r = runtime();
    const all = allWorkerd();
    return { runtime: cpuMs(r), proxy: cpuMs(all.filter((p) => !r.includes(p))), node: process.cpuUsage(), at: now() };
  };
  const cpuSince = (a) => {
    const b = cpuNow();
    const nodeUs = b.node.user + b.node.system - a.node.user - a.node.system;
    return { runtime: b.runtime - a.runtime, proxy: b.proxy - a.proxy, node: nodeUs / 1000, wall: b.at - a.at };
  };
  /**
   * The bench entry's control endpoint. It runs in the same isolate as the 1,000 hubs, so it can wait long behind a
   * wave of hub wake-ups; one that takes over 30 s is tried again.
   */
  const control = async (q = "") => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(`${server.url}/__bench/streaming${q}`, { signal: AbortSignal.timeout(30_000) });
        return await res.json();
      } catch (e) {
        // A connection the busy local runtime reset fails at once ("fetch failed"): a few more tries, a second apart.
        const why = `${e.message}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ""}`;
        if (attempt === 6) throw new Error(`GET /__bench/streaming${q}: ${why}`, { cause: e });
        log(`  ${label ? `${label}: ` : ""}GET /__bench/streaming${q} failed (${why}); trying again`);
        await sleep(1000);
      }
    }
  };

  let posted = 0;
  const runId = Date.now().toString(36);
  async function post() {
    const n = posted++;
    const res = await fetch(`${server.url}/api/v1/statuses`, {
      method: "POST",
      signal: AbortSignal.timeout(60_000),
      headers: { authorization: `Bearer ${seed.poster.token}`, "content-type": "application/json" },
      body: JSON.stringify({ status: `Streaming bench ${runId}-${n}: the quick brown fox jumps over the lazy dog.`, visibility: "public" }),
    });
    const text = await res.text();
    const at = now();
    if (res.status !== 200) throw new Error(`POST /api/v1/statuses answered ${res.status}: ${text.slice(0, 200)}`);
    return { id: JSON.parse(text).id, at };
  }

  /**
   * Waits until every socket has the update for post `p`. The local queue broker (miniflare's, a Durable Object with
   * in-memory timers) was seen to stop dispatching after a long fan-out batch: the consumer had returned, the broker never
   * logged the batch as done and never sent another. When no batch has run for 3 s while sockets still wait, a full
   * batch of empty messages is sent (?kick=1), which makes the broker dispatch again; such events are counted as kicked.
   */
  const kicks = [];
  const settleKicks = [];
  async function waitEvent(fleet, p) {
    const deadline = now() + EVENT_TIMEOUT_MS;
    for (;;) {
      const e = await fleet.waitAll(p.id, KICK_AFTER_MS);
      if (e.count >= fleet.n || now() > deadline) return e;
      const st = await control();
      if (e.count >= fleet.n) return e;
      const running = st.batches.some((b) => b.end === null);
      const lastEnd = Math.max(p.at, ...st.batches.map((b) => b.end ?? 0));
      // Sockets still waiting after the whole fan-out ran are a delivery problem, not a stuck queue: no kick then.
      const ran = st.batches.filter((b) => b.end !== null && b.fanouts.some((f) => f.statusId === p.id)).length;
      if (!running && ran < FANOUT_BATCHES && st.now - lastEnd > KICK_AFTER_MS) {
        log(`  no queue batch for ${fmt((st.now - lastEnd) / 1000, 1)} s with ${e.count}/${fleet.n} sockets served: kicking the local queue`);
        kicks.push(p.id);
        p.kicked = true;
        await control("?kick=1");
      }
    }
  }

  /**
   * Waits until the fan-out of status `id` has run to its end (every chunk's batch finished; with F followers the
   * fan-out takes floor(F / 500) + 1 batches, the last one possibly empty), so the next POST starts on an idle queue.
   * A trailing batch the local broker never dispatches (see waitEvent) is kicked here, before the next measurement.
   */
  async function settle(id) {
    const chunks = FANOUT_BATCHES;
    const since = now();
    const until = since + EVENT_TIMEOUT_MS;
    for (;;) {
      const st = await control();
      const ran = st.batches.filter((b) => b.end !== null && b.fanouts.some((f) => f.statusId === id)).length;
      const running = st.batches.some((b) => b.end === null);
      if (ran >= chunks && !running) return;
      const lastEnd = Math.max(since, ...st.batches.map((b) => b.end ?? 0));
      if (!running && st.now - lastEnd > KICK_AFTER_MS) {
        log(`  the fan-out of ${id} stopped after ${ran}/${chunks} batches: kicking the local queue`);
        settleKicks.push(id);
        await control("?kick=1");
      }
      if (now() > until) {
        notes.push(`the fan-out of ${id} did not finish within ${EVENT_TIMEOUT_MS / 1000} s (${ran}/${chunks} batches)`);
        return;
      }
      await sleep(250);
    }
  }

  async function measurePosts(fleet, label) {
    let prev = null;
    for (let i = 0; i < WARMUP; i++) {
      const p = await post();
      if (fleet) {
        const e = await waitEvent(fleet, p);
        if (process.env.BENCH_DEBUG) log(`warm-up ${p.id}: ${e.count} arrived, ${fleet.closed} closed`);
      }
      await settle(p.id);
      prev = p.id;
    }
    await control("?reset=1");
    const c0 = cpuNow();
    const posts = [];
    for (let i = 0; i < POSTS; i++) {
      if (prev && i > 0) await settle(prev);
      const p = await post();
      posts.push(p);
      if (fleet) p.event = await waitEvent(fleet, p);
      prev = p.id;
    }
    await settle(prev);
    const cpu = cpuSince(c0);
    const stats = await control();
    log(`  ${label}: ${POSTS} posts in ${fmt(cpu.wall / 1000, 1)} s`);
    if (process.env.BENCH_DEBUG) log(JSON.stringify({ counters: stats.counters, batches: stats.batches }));
    return { label, posts, cpu, batches: stats.batches, counters: stats.counters, d1: stats.d1 };
  }

  /** Latency figures of one scenario from its posts, the sockets' arrival times and the consumer's batch log. */
  function analyse(run, fleet, chunkOf) {
    const fromPost = [];
    const fromConsumer = [];
    const lastPerEvent = [];
    const queueWait = [];
    let missing = 0;
    const batchOf = (id, chunk) => {
      // chunk 0 is the fan-out job without a cursor; chunk k the k-th re-enqueued one (in start order).
      const mine = run.batches.filter((b) => b.fanouts.some((f) => f.statusId === id)).sort((a, b) => a.start - b.start);
      return mine[chunk] ?? null;
    };
    for (const p of run.posts) {
      const e = p.event;
      const starts = [];
      for (let k = 0; k < 8; k++) starts.push(batchOf(p.id, k)?.start ?? null);
      // An event that needed a queue kick (see waitEvent) waited on the local broker, not on Tern: its times from the
      // POST are left out; its times from the consumer's start are kept.
      if (starts[0] !== null && !p.kicked) queueWait.push(starts[0] - p.at);
      let last = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < fleet.n; i++) {
        const t = e.times[i];
        if (Number.isNaN(t)) {
          missing++;
          continue;
        }
        if (!p.kicked) fromPost.push(t - p.at);
        const s = starts[chunkOf(i)];
        if (s !== null) fromConsumer.push(t - s);
        if (t > last) last = t;
      }
      if (e.count === fleet.n && !p.kicked) lastPerEvent.push(last - p.at);
    }
    const kicked = run.posts.filter((p) => p.kicked).length;
    const cpuPerEvent = (run.cpu.runtime - idleRate * (run.cpu.wall / 1000)) / run.posts.length;
    return {
      fromPost: summary(fromPost),
      fromConsumer: summary(fromConsumer),
      lastPerEvent: summary(lastPerEvent),
      queueWait: summary(queueWait),
      missing,
      kicked,
      cpuPerEvent,
      proxyPerEvent: run.cpu.proxy / run.posts.length,
      nodePerEvent: run.cpu.node / run.posts.length,
    };
  }
  /** After closing a scenario's sockets: the router forgets their hubs (each hub reports when its last socket closes). */
  async function waitRouterEmpty(key) {
    const deadline = Date.now() + 30_000;
    let s;
    while (Date.now() < deadline) {
      s = await control("?presence=1");
      if (!s.presence.online.length && !s.presence.shared.length) return true;
      await sleep(500);
    }
    notes.push(
      `${key}: 30 s after every socket closed the router still listed ${s.presence.online.length} connected accounts and ` +
        `shared keys [${s.presence.shared.join(", ")}]`,
    );
    return false;
  }

  // Idle workerd with nobody connected (timers, the local queue broker ...): subtracted from every CPU figure.
  await sleep(1000);
  const idle0 = cpuNow();
  await sleep(3000);
  const idleRate = cpuSince(idle0).runtime / 3; // ms per s
  log(`idle runtime CPU ${fmt(idleRate, 1)} ms/s`);
  return {
    server,
    seed,
    wsBase,
    control,
    post,
    waitEvent,
    settle,
    measurePosts,
    analyse,
    cpuNow,
    cpuSince,
    idleRate,
    waitRouterEmpty,
    kicks,
    settleKicks,
    label,
  };
}

async function main() {
  const t0 = Date.now();
  const notes = [];
  const compare = () =>
    runComparison({ root, rev: BEFORE_REV, sizes: COMPARE_SIZES, startHarness, Fleet, notes, log, fanoutChunk: FANOUT_CHUNK }).catch((e) => ({
      error: `the comparison failed: ${e.message}`,
    }));
  if (!ALL_SCENARIOS.some((k) => only.includes(k))) {
    const comparison = only.includes("compare") ? await compare() : null;
    printReport({ results: [], baseline: null, idleRate: 0, hibernation: null, notes, serverErrors: [], elapsed: (Date.now() - t0) / 1000, comparison });
    return;
  }
  log(`seeding a poster and ${SOCKETS} followers with tokens, starting the bench server ...`);
  const h = await startHarness({ notes });
  const { server, seed, wsBase, control, post, waitEvent, measurePosts, analyse, cpuNow, cpuSince, idleRate, waitRouterEmpty, kicks, settleKicks } = h;

  // Baseline: the same POSTs with nobody listening (the router answers "nobody" and publishing stops there).
  const baseline = await measurePosts(null, "no listeners");
  const results = [];
  let hibernation = null;
  const baseCpu = (baseline.cpu.runtime - idleRate * (baseline.cpu.wall / 1000)) / baseline.posts.length;
  const baseQueue = summary(
    baseline.posts
      .map((p) => {
        const b = baseline.batches.filter((x) => x.fanouts.some((f) => f.statusId === p.id)).sort((x, y) => x.start - y.start)[0];
        return b ? b.start - p.at : Number.NaN;
      })
      .filter((x) => !Number.isNaN(x)),
  );

  async function scenario(key) {
    const fleet = new Fleet(SOCKETS, key === "notify" ? "notification" : "update");
    try {
      await runScenario(key, fleet);
    } finally {
      // Whatever happened, this scenario's sockets go before the next one opens its own.
      log(`  closing ${SOCKETS} sockets ...`);
      await fleet.close();
      await waitRouterEmpty(key).catch((e) => notes.push(`${key}: ${e.message}`));
    }
  }

  async function runScenario(key, fleet) {
    const signedIn = key !== "public";
    const stream = key === "user" ? "user" : key === "notify" ? "user:notification" : "public:local";
    if (key === "notify") await notifyOnPosts();
    log(`${key}: opening ${SOCKETS} sockets (stream=${stream}, ${signedIn ? "one per follower" : "signed out"}, ${CONCURRENCY} at a time) ...`);
    await control("?reset=1");
    const c0 = cpuNow();
    await fleet.open(
      () => `${wsBase}/api/v1/streaming?stream=${stream}`,
      (i) => (signedIn ? { authorization: `Bearer ${seed.listeners[i].token}` } : {}),
    );
    const openCpu = cpuSince(c0);
    const afterOpen = await control("?presence=1");
    const listed = signedIn ? afterOpen.presence.online.length : afterOpen.presence.shared.includes(stream) ? "shared" : 0;
    log(`  ${fleet.opened} open in ${fmt(openCpu.wall / 1000, 1)} s (${fleet.failed.length} failed); the router lists ${listed}`);
    if (fleet.failed.length) notes.push(`${key}: ${fleet.failed.length} sockets failed to open, e.g. ${fleet.failed.slice(0, 3).join("; ")}`);
    // Tern subscribes the query's stream before it answers 101, so an open socket is a subscribed one: no barrier needed.
    const run = await measurePosts(fleet, key);
    const chunkOf = key === "public" || key === "public-auth" ? () => 0 : (i) => Math.floor(i / FANOUT_CHUNK);
    const a = analyse(run, fleet, chunkOf);
    const result = {
      key,
      stream,
      signedIn,
      fleet,
      run,
      a,
      open: {
        wall: openCpu.wall,
        cpu: openCpu.runtime,
        constructed: afterOpen.counters.constructed,
        fetches: afterOpen.counters.fetches,
        failed: fleet.failed.length,
      },
      delivers: run.counters.delivers / run.posts.length,
      constructedDuringPosts: run.counters.constructed,
    };
    results.push(result);
    if (key === HIBERNATION_ON) hibernation = await hibernationPhase(fleet, key);
    if (fleet.other.size) for (const [, v] of fleet.other) notes.push(`${key}: ${v.n} other messages, e.g. ${v.sample}`);
    if (fleet.closed) notes.push(`${key}: ${fleet.closed} sockets were closed by the server during the scenario`);
  }

  /** Every listener asks to be notified of the poster's posts (the bell: POST /follow with notify), 20 at a time. */
  async function notifyOnPosts() {
    const c0 = cpuNow();
    let next = 0;
    const one = async () => {
      while (next < seed.listeners.length) {
        const l = seed.listeners[next++];
        const res = await fetch(`${server.url}/api/v1/accounts/${seed.poster.accountId}/follow`, {
          method: "POST",
          signal: AbortSignal.timeout(60_000),
          headers: { authorization: `Bearer ${l.token}`, "content-type": "application/json" },
          body: JSON.stringify({ notify: true }),
        });
        const rel = await res.json();
        if (res.status !== 200 || rel.notifying !== true) throw new Error(`follow with notify answered ${res.status}: ${JSON.stringify(rel).slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 20 }, one));
    log(`  notify on for ${seed.listeners.length} follows in ${fmt(cpuSince(c0).wall / 1000, 1)} s`);
  }

  /**
   * The sockets left alone for IDLE_S seconds (quiet), then IDLE_S seconds more with a text `ping` from every socket
   * every PING_EVERY_S (answered by the runtime's auto-response, setWebSocketAutoResponse in
   * src/streaming/streaming-do.ts, without running the object); then one more status, to see what had to wake up.
   */
  async function hibernationPhase(fleet, key) {
    log(`${key}: ${IDLE_S} s quiet, then ${PING_FOR_S} s with pings every ${PING_EVERY_S} s ...`);
    await sleep(2000); // the last event's work settles
    const before = await control();
    const q0 = cpuNow();
    const windows = [];
    for (let t = 0; t < IDLE_S; t += QUIET_WINDOW_S) {
      const w0 = cpuNow();
      await sleep(Math.min(QUIET_WINDOW_S, IDLE_S - t) * 1000);
      windows.push(cpuSince(w0).runtime);
    }
    const quiet = cpuSince(q0);
    const pongs0 = fleet.pongs;
    let sent = 0;
    const p0 = cpuNow();
    const end = now() + PING_FOR_S * 1000;
    while (now() < end) {
      sent += fleet.ping();
      await sleep(Math.min(PING_EVERY_S * 1000, Math.max(0, end - now())));
    }
    const pinged = cpuSince(p0);
    await sleep(300); // the last pongs in flight
    const after = await control();
    const pongs = fleet.pongs - pongs0;
    // The next event: how many objects had to be constructed again to take it (each one had been evicted from memory
    // with its sockets kept open, i.e. hibernated), and how long it took to reach every socket.
    const p = await post();
    const e = await waitEvent(fleet, p);
    const woke = await control();
    const lat = [];
    for (const t of e.times) if (!Number.isNaN(t)) lat.push(t - p.at);
    const rate = (c) => ({ runtime: c.runtime / (c.wall / 1000), proxy: c.proxy / (c.wall / 1000), s: c.wall / 1000 });
    return {
      key,
      quiet: rate(quiet),
      windows,
      pinged: rate(pinged),
      sent,
      pongs,
      constructedIdle: after.counters.constructed - before.counters.constructed,
      wsMessagesIdle: after.counters.wsMessages - before.counters.wsMessages,
      constructedWake: woke.counters.constructed - after.counters.constructed,
      deliversWake: woke.counters.delivers - after.counters.delivers,
      wakeLatency: summary(lat),
      wakeReached: e.count,
      wakeKicked: !!p.kicked,
    };
  }

  for (const key of ALL_SCENARIOS) {
    if (!only.includes(key)) continue;
    try {
      await scenario(key);
    } catch (e) {
      log(`${key} failed: ${e.stack ?? e}`);
      notes.push(`${key}: the harness failed: ${e.message}`);
    }
  }

  const serverErrors = server
    .output()
    .split("\n")
    .filter((l) => /unhandled error|Error:|✘|Segmentation|signal #|streaming:/.test(l))
    .map((l) => l.replace(/\x1b\[[0-9;]*m/g, "").trim())
    .filter(Boolean);
  await server.stop();
  if (kicks.length || settleKicks.length)
    notes.push(
      `the local queue broker stopped dispatching ${kicks.length + settleKicks.length} time(s) (${settleKicks.length} between events, ` +
        `${kicks.length} during one) and was kicked with a full batch of empty messages (see bench/README.md)`,
    );
  const comparison = only.includes("compare") ? await compare() : null;
  printReport({
    results,
    baseline: { cpu: baseCpu, queue: baseQueue },
    idleRate,
    hibernation,
    notes,
    serverErrors,
    elapsed: (Date.now() - t0) / 1000,
    comparison,
  });
}

function printReport({ results, baseline, idleRate, hibernation, notes, serverErrors, elapsed, comparison }) {
  const out = [];
  const wrap = (text) => text.replace(/(.{1,118})(\s+|$)/g, "$1\n").trimEnd();
  const la = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  out.push("");
  out.push(`Tern streaming benchmark — local wrangler dev (loopback), ${cpus().length} cores, node ${process.version}, load average at the end ${la}`);
  out.push(`${SOCKETS} WebSockets per scenario, ${POSTS} measured statuses (after ${WARMUP} warm-up), each POSTed once every socket had the previous one.`);
  out.push("");
  if (baseline) {
    const rows = [
      [
        "Scenario",
        "sockets",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "all reached p50/max",
        "queue wait p50",
        "after consumer p50/p99/max",
        "CPU ms/event",
        "−baseline",
        "hub RPCs/event",
      ],
    ];
    for (const r of results) {
      const a = r.a;
      rows.push([
        `${r.key}: ${r.stream}${r.signedIn ? " (signed in)" : " (signed out)"}`,
        String(r.fleet.opened),
        fmt(a.fromPost.p50),
        fmt(a.fromPost.p95),
        fmt(a.fromPost.p99),
        fmt(a.fromPost.max),
        `${fmt(a.lastPerEvent.p50)} / ${fmt(a.lastPerEvent.max)}`,
        fmt(a.queueWait.p50),
        `${fmt(a.fromConsumer.p50)} / ${fmt(a.fromConsumer.p99)} / ${fmt(a.fromConsumer.max)}`,
        fmt(a.cpuPerEvent, 1),
        fmt(a.cpuPerEvent - baseline.cpu, 1),
        fmt(r.delivers, 0),
      ]);
    }
    rows.push(["no listeners (baseline)", "0", "", "", "", "", "", fmt(baseline.queue.p50), "", fmt(baseline.cpu, 1), "", "0"]);
    out.push(table(rows));
    // The issue's goal is for one shared stream (every socket on the same stream, one post); `user` and `notify` are 1,000 streams.
    for (const r of results.filter((x) => x.stream.startsWith("public"))) {
      const worst = r.a.lastPerEvent.max;
      out.push(`Goal, ${r.key}: all ${r.fleet.opened} sockets within 150 ms of the POST: worst event ${fmt(worst)} ms ${worst <= 150 ? "✓" : "✗"}`);
    }
    out.push("");
    out.push(
      wrap(
        `Latency: from the POST's response arriving to the update arriving, per socket and event (${POSTS} × sockets ` +
          `values). "all reached": the last socket of each event. "queue wait": POST returned → the JOBS consumer started ` +
          `the batch with the status's fan-out (wrangler.toml's max_batch_timeout = 0, as in production: a batch starts as soon as a message is ` +
          `there; below 0 when the consumer started before the POST's response reached this harness). "after consumer": the socket's arrival − the start of the consumer batch whose fan-out chunk ` +
          `published to it (fan-out takes followers ${FANOUT_CHUNK} at a time; each further chunk is one more trip through ` +
          `the queue, so in "user" half of the sockets wait for a second batch). Issue goal: ≤ 150 ms to reach all 1,000.`,
      ),
    );
    out.push(
      wrap(
        `CPU ms/event: utime+stime of the workerd runtime process (wrangler's proxy excluded) from the first measured POST ` +
          `to the last socket receiving the last event, minus idle (${fmt(idleRate, 1)} ms/s), ÷ events; it includes the ` +
          `POST, the home-feed fan-out into ${SOCKETS} feeds, the router and every hub. "−baseline" subtracts the same POSTs ` +
          `with nobody connected (${fmt(baseline.cpu, 1)} ms: POST + fan-out + one call asking who listens), leaving the streaming ` +
          `work. Local D1 runs inside the same workerd, so each hub's D1 batch (its own rendering of the status for its ` +
          `account) is counted here; production bills that to D1. Clock tick ${clockTickMs()} ms.`,
      ),
    );
    const side = results.map(
      (r) =>
        `${r.key}: ${fmt((r.a.cpuPerEvent - baseline.cpu) / Math.max(1, r.delivers), 2)} ms of runtime CPU per hub delivery ` +
        `(−baseline ÷ hub RPCs), ${fmt(r.constructedDuringPosts / r.run.posts.length, 0)} objects woken from hibernation per event; ` +
        `wrangler's proxy workerd ${fmt(r.a.proxyPerEvent, 1)} ms/event, this harness ${fmt(r.a.nodePerEvent, 1)} ms/event; ` +
        `opening ${r.open.failed ? `${SOCKETS - r.open.failed}/${SOCKETS}` : SOCKETS} sockets took ${fmt(r.open.wall / 1000, 1)} s and ` +
        `${fmt(r.open.cpu / SOCKETS, 2)} ms of runtime CPU each (${r.open.constructed} objects constructed)` +
        (r.a.missing ? `; ${r.a.missing} (socket, event) pairs never arrived within ${EVENT_TIMEOUT_MS / 1000} s` : "") +
        (r.a.kicked ? `; ${r.a.kicked} of ${r.run.posts.length} events needed a queue kick and are left out of the times from the POST` : ""),
    );
    if (side.length) out.push(...side.map(wrap));
  }
  if (hibernation) {
    const h = hibernation;
    out.push("");
    out.push(`Hibernation (the ${h.key} sockets, after the figures above):`);
    out.push(
      wrap(
        `  ${fmt(h.quiet.s, 1)} s quiet: workerd runtime CPU ${fmt(h.quiet.runtime, 1)} ms/s (per ${QUIET_WINDOW_S} s: ` +
          `${h.windows.map((w) => fmt(w, 0)).join(", ")} ms; nobody connected, at the start: ${fmt(idleRate, 1)} ms/s). Then ${fmt(h.pinged.s, 1)} s with ${h.sent} text pings (every socket every ` +
          `${fmt(PING_EVERY_S, 1)} s): ${h.pongs} pongs came back, webSocketMessage ran ${h.wsMessagesIdle} times, runtime CPU ` +
          `${fmt(h.pinged.runtime, 1)} ms/s (${fmt((h.pinged.runtime * h.pinged.s) / Math.max(1, h.sent), 2)} ms per ping; ` +
          `wrangler's proxy, which relays the frames, ${fmt(h.pinged.proxy, 1)} ms/s). Objects constructed over both: ` +
          `${h.constructedIdle}.`,
      ),
    );
    out.push(
      wrap(
        `  The next status: ${h.constructedWake} objects were constructed to take it (${h.deliversWake} hub deliveries), ` +
          `${h.constructedWake > 0 ? "so they had been evicted from memory while their sockets stayed open: hibernated" : "none had been evicted (all still in memory)"}; ` +
          `it reached ${h.wakeReached}/${SOCKETS} sockets, p50 ${fmt(h.wakeLatency.p50)} ms, max ${fmt(h.wakeLatency.max)} ms from the POST` +
          `${h.wakeKicked ? " (the local queue needed a kick first, so these times include ≥ 3 s of stall)" : ""}.`,
      ),
    );
    out.push(
      wrap(
        `  How: bench/streaming-entry.js subclasses the Streaming object to count constructor calls, webSocketMessage calls ` +
          `and deliveries (locally every object runs in one isolate, so one set of counters sees them all).`,
      ),
    );
  }
  if (comparison) {
    out.push("");
    out.push(...formatComparison(comparison, table, wrap, SOCKETS));
    // bench/all.mjs (`npm run bench`) prints the goal lines of every part again at its end.
    if (process.env.BENCH_SUMMARY) appendFileSync(process.env.BENCH_SUMMARY, `${comparisonGoals(comparison).join("\n")}\n`);
  }
  for (const l of serverErrors.slice(0, 10)) notes.push(`server log: ${l.slice(0, 300)}`);
  if (notes.length) {
    out.push("");
    out.push("Notes:");
    for (const n of notes) out.push(`  - ${n}`);
  }
  out.push("");
  out.push(`Done in ${elapsed.toFixed(0)} s.`);
  console.log(out.join("\n"));
}

for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
