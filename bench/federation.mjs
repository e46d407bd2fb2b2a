// Federation figures for `npm run bench` (scenario keys actor, webfinger, inbox, delivery; `--only=fed` runs them
// all). The remote side lives in this process (bench/fed-peers.mjs), so only Tern's work lands in workerd's CPU.
//   actor, webfinger — plain GET scenarios in the main table.
//   inbox            — POST /inbox with a Like signed as a remote actor (draft-cavage, rsa-sha256), one per local
//                      status; in the main table. The JOBS consumer is held during the measured phases (see
//                      bench/worker-entry.js), so that row is verify + store + enqueue only; on release the backlog
//                      is processed and timed on its own ("inbox activity processed"). In production the activity is
//                      processed by the POST's own invocation after its 202 (Effects.afterResponse); run.mjs starts
//                      the server with EFFECTS_AFTER_RESPONSE=queue to keep these two figures apart, and
//                      bench/day.mjs measures the two together, the production way.
//   delivery         — a post by an account with 1,000 remote followers on 200 hosts, drained through the DELIVERY
//                      queue to the stub inboxes: once with shared inboxes (200 requests), once personal (1,000).
import { generateKeyPairSync, sign, verify } from "node:crypto";
import { verifyReceived } from "./fed-peers.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

export const FED_KEYS = ["actor", "webfinger", "inbox", "delivery"];
export const FED_TARGETS = { inboxPostCpu: 5, processedCpu: 10, deliveryCpu: 3, drainSeconds: 30 };

/**
 * @param {{ server: { url: string }, peers: object, seed: object, pids: () => number[], cpuMs: (p: number[]) => number,
 *   canCpu: boolean, idleMsPerSec: () => number, baselineCpu: () => number | null, runtimeAlive: () => boolean, log: Function }} ctx
 */
export function createFederationBench(ctx) {
  const { server, peers, seed, log } = ctx;
  const host = new URL(server.url).host;
  const runId = Date.now().toString(36);
  const state = { firstPost: null, processing: null, drains: [], notes: [] };

  const queues = async (params = "") => {
    const res = await fetch(`${server.url}/__bench/queues${params ? `?${params}` : ""}`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`/__bench/queues answered ${res.status} (is the bench entry in use?)`);
    return res.json();
  };
  const totals = (s) =>
    Object.values(s.queues).reduce((a, q) => ({ arrived: a.arrived + q.arrived, batches: a.batches + q.batches, inflight: a.inflight + q.inflight }), {
      arrived: 0,
      batches: 0,
      inflight: 0,
    });

  /** Waits until both consumers have been idle for a while (the broker flushes a partial batch after 1 s). */
  async function waitQuiet(maxMs = 60_000) {
    const deadline = Date.now() + maxMs;
    let prev = null;
    let polls = 0;
    while (Date.now() < deadline) {
      const t = totals(await queues());
      polls++;
      if (prev && t.inflight === 0 && t.arrived === prev.arrived && t.batches === prev.batches) return polls;
      prev = t;
      await sleep(1300);
    }
    state.notes.push(`queues were still busy after ${maxMs / 1000} s of waiting`);
    return polls;
  }

  // ---- inbox ----
  let likeSeq = 0;
  const inboxUrl = `${server.url}/inbox`;
  const likeRequest = () => {
    const n = likeSeq++;
    if (n >= seed.liked.uris.length) throw new Error("bench: more Likes than seeded statuses (raise `liked` in the fed seed)");
    const body = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${peers.actorUri}#likes/${runId}-${n}`,
      type: "Like",
      actor: peers.actorUri,
      object: seed.liked.uris[n],
    });
    return { url: inboxUrl, init: { method: "POST", headers: peers.sign(inboxUrl, body), body } };
  };

  async function firstInboxPost() {
    // The instance actor (which signs Tern's fetch of the unknown actor) and its key pair are made once per instance,
    // on first need: make them outside the timing (GET /actor), so the figure is what any unknown actor costs.
    await fetch(new URL("/actor", inboxUrl), { headers: { accept: "application/activity+json" } })
      .then((r) => r.arrayBuffer())
      .catch(() => {});
    const { url, init } = likeRequest();
    const t0 = now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
      const body = await res.text();
      const m = /(?:^|,)\s*d1\b[^,]*?;\s*dur=(\d+)/.exec(res.headers.get("server-timing") ?? "");
      state.firstPost = { status: res.status, ms: now() - t0, rt: m ? Number(m[1]) : null, body: body.slice(0, 200) };
    } catch (e) {
      state.firstPost = { status: `network: ${e.cause?.code ?? e.message}`, ms: now() - t0, rt: null, body: "" };
    }
    if (state.firstPost.status !== 202) log(`  first signed POST /inbox answered ${state.firstPost.status}: ${state.firstPost.body}`);
  }

  async function holdJobs() {
    await waitQuiet();
    await queues("hold=jobs&reset=1");
  }

  /** Releases the held inbox jobs and times their processing; then checks the effect through the REST API. */
  async function processHeld(result) {
    const expected = (result.r1?.okCount ?? 0) + (result.r10?.okCount ?? 0);
    const before = await queues();
    const waiting = before.queues.jobs?.arrived ?? 0;
    const p = ctx.pids();
    const c0 = ctx.canCpu ? ctx.cpuMs(p) : null;
    const t0 = now();
    await queues("release=jobs");
    let polls = 1;
    let s = before;
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      await sleep(200);
      s = await queues();
      polls++;
      const j = s.queues.jobs;
      if (j && (j.byType.inbox ?? 0) + j.retried >= expected && j.inflight === 0) break;
      if (!ctx.runtimeAlive()) break;
    }
    const t1 = now();
    const c1 = ctx.canCpu ? ctx.cpuMs(p) : null;
    const j = s.queues.jobs ?? { byType: {}, d1: 0, acked: 0, retried: 0, batches: 0 };
    const processed = j.byType.inbox ?? 0;
    const seconds = (t1 - t0) / 1000;
    const base = ctx.baselineCpu() ?? 0;
    const cpu = c0 === null || !processed ? null : (c1 - c0 - ctx.idleMsPerSec() * seconds - polls * base) / processed;
    state.processing = {
      expected,
      waiting,
      processed,
      retried: j.retried,
      other: Object.entries(j.byType).filter(([k]) => k !== "inbox"),
      batches: j.batches,
      d1: processed ? j.d1 / j.acked : null,
      cpu,
      seconds,
      rate: processed / seconds,
      polls,
    };
    if (processed < expected)
      state.notes.push(`inbox processing: ${processed} of ${expected} held activities were processed within the wait (retried ${j.retried})`);
    // The effect a user sees: each liked status shows favourites_count 1 (warm-up Likes included).
    const ids = seed.liked.ids.slice(0, likeSeq);
    let seen = 0;
    let failed = 0;
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        try {
          const res = await fetch(`${server.url}/api/v1/statuses/${id}`, { signal: AbortSignal.timeout(20_000) });
          const st = await res.json();
          if (res.ok && st.favourites_count >= 1) seen++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: 10 }, worker));
    state.processing.visible = { liked: ids.length, seen, failed };
  }

  // ---- delivery ----
  async function drain(variant, label) {
    const poster = seed[variant];
    // The poster's key pair is made on first need (actor document or first delivery); make it outside the timing.
    const actorRes = await fetch(`${server.url}/users/${poster.username}`, {
      headers: { accept: "application/activity+json" },
      signal: AbortSignal.timeout(30_000),
    });
    const actor = actorRes.ok ? await actorRes.json() : null;
    await waitQuiet();
    await queues("reset=1");
    peers.reset();
    const p = ctx.pids();
    const c0 = ctx.canCpu ? ctx.cpuMs(p) : null;
    const t0 = now();
    const res = await fetch(`${server.url}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${poster.token}`, "content-type": "application/json" },
      body: JSON.stringify({ status: `Federation bench ${runId} (${variant}): hello to ${poster.followers} remote followers`, visibility: "public" }),
      signal: AbortSignal.timeout(30_000),
    });
    const postBody = await res.text();
    const postMs = now() - t0;
    const d = { variant, label, expect: poster.expect, followers: poster.followers, postStatus: res.status, postMs };
    if (!res.ok) {
      state.notes.push(`delivery (${variant}): POST /api/v1/statuses answered ${res.status}: ${postBody.slice(0, 200)}`);
      state.drains.push(d);
      return;
    }
    const deadline = t0 + 150_000;
    while (peers.received.count < poster.expect && now() < deadline) await sleep(20);
    // The consumer acknowledges after the last response; wait for that too, so its CPU is in.
    let polls = 0;
    let s;
    for (let i = 0; i < 50; i++) {
      s = await queues();
      polls++;
      const q = s.queues.delivery;
      if (q && q.acked + q.retried >= peers.received.count && q.inflight === 0) break;
      await sleep(100);
    }
    const t1 = now();
    const c1 = ctx.canCpu ? ctx.cpuMs(p) : null;
    const got = peers.received.count;
    const q = s.queues.delivery ?? { acked: 0, retried: 0, d1: 0, batches: 0 };
    const jobs = s.queues.jobs ?? { byType: {}, d1: 0 };
    const base = ctx.baselineCpu() ?? 0;
    Object.assign(d, {
      received: got,
      hosts: peers.received.hosts.size,
      paths: peers.received.paths.size,
      firstS: peers.received.first === null ? null : (peers.received.first - t0) / 1000,
      lastS: peers.received.last === null ? null : (peers.received.last - t0) / 1000,
      acked: q.acked,
      retried: q.retried,
      batches: q.batches,
      d1: q.acked ? q.d1 / q.acked : null,
      jobsD1: jobs.d1,
      jobTypes: jobs.byType,
      cpu: c0 === null || !got ? null : (c1 - c0 - ctx.idleMsPerSec() * ((t1 - t0) / 1000) - polls * base) / got,
    });
    d.rate = d.lastS ? got / d.lastS : null;
    // Prove they are signed: check the first one against the key Tern publishes.
    const sample = peers.received.samples[0];
    const pem = actor?.publicKey?.publicKeyPem;
    d.signature = sample && pem ? verifyReceived(sample, pem) : { ok: false, why: sample ? "no actor key to check against" : "nothing received" };
    if (d.signature.ok && d.signature.keyId !== `${actor.id}#main-key`) d.signature = { ok: false, why: `keyId ${d.signature.keyId} is not the poster's` };
    if (got < poster.expect)
      state.notes.push(`delivery (${variant}): ${got} of ${poster.expect} requests arrived within 150 s (acked ${q.acked}, retried ${q.retried})`);
    if (peers.received.count > poster.expect) state.notes.push(`delivery (${variant}): ${peers.received.count} requests arrived, expected ${poster.expect}`);
    state.drains.push(d);
  }

  const scenarios = [
    {
      key: "actor",
      label: "GET /users/:name (actor, AS2)",
      path: "/users/viewer",
      headers: { accept: "application/activity+json" },
      ok: [200],
    },
    {
      key: "webfinger",
      label: "GET /.well-known/webfinger",
      path: `/.well-known/webfinger?resource=${encodeURIComponent(`acct:viewer@${host}`)}`,
      ok: [200],
    },
    {
      key: "inbox",
      label: "POST /inbox (signed Like: verify+store)",
      request: likeRequest,
      ok: [202],
      target: { cpu: FED_TARGETS.inboxPostCpu },
      prepare: firstInboxPost,
      afterWarmup: holdJobs,
      after: processHeld,
      release: () => queues("release=jobs").catch(() => {}),
    },
    {
      key: "delivery",
      label: "Delivery drains",
      custom: async () => {
        await drain("shared", `${seed.shared.followers} followers on 200 hosts, shared inboxes`);
        await drain("personal", `${seed.personal.followers} followers on 200 hosts, personal inboxes`);
      },
    },
  ];

  return { scenarios, state, report: (opts) => report(state, opts, peers) };
}

const fmt = (n, d = 1) => (n === null || n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
const mark = (v, t) => (v === null || v === undefined ? `≤${t} ?` : `≤${t} ${v <= t ? "✓" : "✗"}`);

/** The federation table and its notes (lines). */
function report(state, { perRt, table, wrap, ran }, peers) {
  const out = [];
  const rows = [["Federation (work off the request path)", "items", "D1 RT/item", "CPU ms/item", "target", "≈w/o D1", "wall s", "items/s", "drain target"]];
  const noD1 = (cpu, rt) => (cpu == null || rt == null || perRt == null ? null : Math.max(0, cpu - rt * perRt));
  const pr = state.processing;
  if (pr) {
    rows.push([
      "inbox activity processed (JOBS: Like → favourite)",
      String(pr.processed),
      fmt(pr.d1, 1),
      fmt(pr.cpu, 2),
      mark(pr.cpu, FED_TARGETS.processedCpu),
      fmt(noD1(pr.cpu, pr.d1), 2),
      fmt(pr.seconds, 1),
      fmt(pr.rate, 0),
      "",
    ]);
  } else if (ran.inbox) rows.push(["inbox activity processed (JOBS: Like → favourite)", "–", "–", "–", `≤${FED_TARGETS.processedCpu}`, "", "", "", ""]);
  for (const d of state.drains) {
    const label = `signed delivery, ${d.variant === "shared" ? "shared inboxes" : "personal inboxes"} (${d.expect})`;
    if (d.received === undefined) {
      rows.push([label, "–", "–", "–", `≤${FED_TARGETS.deliveryCpu}`, "", "", "", `≤${FED_TARGETS.drainSeconds} s`]);
      continue;
    }
    const drained = d.received >= d.expect ? d.lastS : null;
    rows.push([
      label,
      String(d.received),
      fmt(d.d1, 1),
      fmt(d.cpu, 2),
      mark(d.cpu, FED_TARGETS.deliveryCpu),
      fmt(noD1(d.cpu, d.d1), 2),
      fmt(d.lastS, 1),
      fmt(d.rate, 0),
      drained === null ? `≤${FED_TARGETS.drainSeconds} s ✗ (incomplete)` : `≤${FED_TARGETS.drainSeconds} s ${drained <= FED_TARGETS.drainSeconds ? "✓" : "✗"}`,
    ]);
  }
  if (rows.length === 1) return out;
  out.push(table(rows));
  out.push("");
  const text = [];
  if (state.firstPost) {
    text.push(
      `POST /inbox row: c=1 phase CPU ÷ POSTs − baseline, with the JOBS consumer held (nothing processed meanwhile). ` +
        `The very first signed POST (actor and key fetched from the peer, account stored; the instance actor that signs the ` +
        `fetch was made beforehand by GET /actor) answered ${state.firstPost.status} in ` +
        `${fmt(state.firstPost.ms, 0)} ms with ${state.firstPost.rt ?? "?"} D1 round trips (target ≤ 6: ` +
        `${state.firstPost.rt != null && state.firstPost.rt <= 6 ? "✓" : "✗"}); the others use the stored key.`,
    );
  }
  if (pr) {
    text.push(
      `Processed: after the POST phases the held JOBS consumer was released; workerd CPU from release until all ${pr.processed} inbox ` +
        `jobs were acknowledged, minus idle CPU and the ${pr.polls} status polls (baseline each), ÷ activities. D1 RT/item from the ` +
        `bench entry's counter on the consumer's D1 binding (total ÷ messages; ${pr.batches} batches of ≤10). Check through the REST API: ` +
        `${pr.visible.seen} of ${pr.visible.liked} liked statuses show favourites_count ≥ 1${pr.visible.failed ? ` (${pr.visible.failed} lookups failed)` : ""}.` +
        (pr.other.length ? ` Other jobs that ran meanwhile: ${pr.other.map(([k, v]) => `${k} ×${v}`).join(", ")}.` : ""),
    );
  }
  if (state.drains.length) {
    text.push(
      `Deliveries: POST /api/v1/statuses as the poster, then timed until the stub inboxes (Node, ${peers.mode}) had every request; ` +
        `"wall s" is POST → last request received. CPU ms/item = workerd CPU over that span (the POST, its federate job and the ` +
        `DELIVERY consumer, which signs each request at send time) minus idle, ÷ requests. D1 RT/item counts the DELIVERY consumer ` +
        `only. Local queues hand one batch (≤20 messages) at a time to the consumer; production runs batches concurrently.`,
    );
    for (const d of state.drains) {
      if (d.received === undefined) continue;
      const jobs = Object.entries(d.jobTypes)
        .map(([k, v]) => `${k} ×${v}`)
        .join(", ");
      text.push(
        `  ${d.label}: ${d.received} requests to ${d.hosts} hosts (${d.paths} distinct inbox paths), first after ${fmt(d.firstS, 2)} s, ` +
          `last after ${fmt(d.lastS, 2)} s; ${d.batches} consumer batches, ${d.retried} retried; jobs before them: ${jobs || "none"} ` +
          `(${d.jobsD1} D1 RT); POST answered ${d.postStatus} in ${fmt(d.postMs, 0)} ms; first request's signature ` +
          `${d.signature.ok ? "verified against the poster's published key ✓" : `NOT verified: ${d.signature.why}`}.`,
      );
    }
  }
  const rsa = rsaReference();
  text.push(
    `For scale: one RSA-2048 signature costs ${fmt(rsa.sign, 2)} ms and a verification ${fmt(rsa.verify, 3)} ms in Node (OpenSSL) on this ` +
      `machine; workerd's WebCrypto (BoringSSL) is in the same range, so most of the per-item CPU above is D1 and request handling.`,
  );
  for (const t of text) out.push(t.startsWith("  ") ? `  ${wrap(t.trim()).replace(/\n/g, "\n    ")}` : wrap(t));
  return out;
}

/** RSA-2048 sign / verify time in this process (ms each), as a yardstick for the signing part of the figures. */
function rsaReference() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const data = Buffer.from("(request-target): post /inbox\nhost: example.test\ndate: x\ndigest: SHA-256=y");
  let sig;
  let t = performance.now();
  for (let i = 0; i < 100; i++) sig = sign("sha256", data, privateKey);
  const s = (performance.now() - t) / 100;
  t = performance.now();
  for (let i = 0; i < 1000; i++) verify("sha256", data, publicKey, sig);
  return { sign: s, verify: (performance.now() - t) / 1000 };
}
