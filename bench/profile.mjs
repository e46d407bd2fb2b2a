// Where a request's CPU goes inside the Worker: a V8 CPU profile of Tern's isolate while one kind of request repeats.
// `node bench/profile.mjs [scenario] [--n=300] [--out=FILE] [--alloc]`; scenarios: post (POST /api/v1/statuses, with
// the queued work it causes), home, notifications, verify. Not part of `npm run bench`.
// --alloc: what the requests allocate instead (V8's sampling heap profiler, 1 KiB interval, objects collected by
// either GC kept): KiB a request, and the functions that allocate most, by themselves and with what they call. Garbage
// is what the CPU tails are made of (scavenges of several ms land in whichever invocation fills the young generation;
// bench/README.md, "CPU per invocation").
//
// Tern is bundled unminified (`wrangler deploy --dry-run --no-minify`, so the profile names functions), served by
// Miniflare on a fresh local D1 with the migrations applied and the V8 inspector on; the harness signs up one user,
// posts 60 statuses (for the read scenarios), warms up with 50 requests, then records a profile over N requests
// (Profiler domain of the inspector protocol, 50 µs sampling). It prints the functions with the most self time and
// the most inclusive time per request, and writes the profile (open it in Chrome DevTools' Performance panel).
// Only the Worker's isolate is profiled: local D1's SQLite runs in another one and is not in these figures, the D1
// binding's JavaScript (`cloudflare-internal:d1-api`: sending a query, parsing its JSON result) is. Sampling
// overhead inflates the totals; read the shares.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevel } from "miniflare";
import WebSocket from "ws";
import { applyMigrations, freePort } from "../test/support/server.mjs";
import { apiCall, bundleTern, signUp, ternMiniflare } from "./miniflare.mjs";

const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const SCENARIO = argv.find((a) => !a.startsWith("--")) ?? "post";
const N = Number(opt("n") ?? 300);
const OUT = opt("out") ?? join(tmpdir(), `tern-${SCENARIO}.cpuprofile`);
const TOP = Number(opt("top") ?? 25);
const ALLOC = argv.includes("--alloc");

const tmp = mkdtempSync(join(tmpdir(), "tern-profile-"));
try {
  const script = bundleTern(join(tmp, "bundle"), { minify: false });
  applyMigrations(tmp);
  const inspectorPort = await freePort();
  // Loopback is on the rate limits' safelist by default, so a long run is never refused.
  const mf = ternMiniflare({ script, persistTo: tmp, port: await freePort(), inspectorPort, vars: { REGISTRATIONS_MODE: "open" }, logLevel: LogLevel.ERROR });
  const url = (await mf.ready).href.replace(/\/$/, "");
  try {
    const statuses = {};
    const call = async (path, init) => {
      const { status, body } = await apiCall(url, path, init);
      statuses[status] = (statuses[status] ?? 0) + 1;
      return body;
    };
    const token = await signUp(url, "profile");
    const post = (i) => call("/api/v1/statuses", { form: { status: `Status ${i} about #tern with a few more words to count` }, token });
    const scenarios = {
      post,
      home: () => call("/api/v1/timelines/home?limit=20", { token }),
      notifications: () => call("/api/v1/notifications", { token }),
      verify: () => call("/api/v1/accounts/verify_credentials", { token }),
    };
    const one = scenarios[SCENARIO];
    if (!one) throw new Error(`unknown scenario ${SCENARIO}: ${Object.keys(scenarios).join(", ")}`);
    if (SCENARIO !== "post") for (let i = 0; i < 60; i++) await post(i);
    for (let i = 0; i < 50; i++) await one(-i);
    for (const k of Object.keys(statuses)) delete statuses[k];

    const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
    const target = targets.find((t) => t.title?.includes("core:user:tern"));
    if (!target) throw new Error(`no inspector target for the Worker: ${targets.map((t) => t.title).join(", ")}`);
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((r, j) => ws.once("open", r).once("error", j));
    let next = 0;
    const waiting = new Map();
    ws.on("message", (m) => {
      const d = JSON.parse(m);
      waiting.get(d.id)?.(d);
      waiting.delete(d.id);
    });
    const cdp = (method, params = {}) =>
      new Promise((r) => {
        const id = ++next;
        waiting.set(id, r);
        ws.send(JSON.stringify({ id, method, params }));
      });
    if (ALLOC) {
      await cdp("HeapProfiler.enable");
      await cdp("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      for (let i = 0; i < N; i++) await one(i);
      const { result } = await cdp("HeapProfiler.stopSampling");
      ws.close();
      reportAlloc(result.profile);
      console.log(`answers: ${JSON.stringify(statuses)}`);
    } else {
      await cdp("Profiler.enable");
      await cdp("Profiler.setSamplingInterval", { interval: 50 });
      await cdp("Profiler.start");
      for (let i = 0; i < N; i++) await one(i);
      const { result } = await cdp("Profiler.stop");
      ws.close();
      writeFileSync(OUT, JSON.stringify(result.profile));
      report(result.profile);
      console.log(`answers: ${JSON.stringify(statuses)}; profile written to ${OUT}`);
    }
  } finally {
    await mf.dispose();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

function report(p) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  for (const [i, id] of p.samples.entries()) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  const name = (n) => `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber + 1}`;
  const selfBy = new Map();
  const incBy = new Map();
  let busy = 0;
  for (const [id, t] of self) {
    const n = byId.get(id);
    if (n.callFrame.functionName === "(idle)") continue;
    busy += t;
    selfBy.set(name(n), (selfBy.get(name(n)) ?? 0) + t);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = name(byId.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      incBy.set(k, (incBy.get(k) ?? 0) + t);
    }
  }
  const ms = (us) => (us / 1000 / N).toFixed(3).padStart(7);
  console.log(`${SCENARIO}: ${N} requests, the Worker's isolate busy ${ms(busy)} ms a request (sampled; unminified bundle)`);
  console.log(`\nmost self time (ms a request):`);
  for (const [k, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${ms(t)}  ${k}`);
  console.log(`\nmost inclusive time (ms a request):`);
  for (const [k, t] of [...incBy].sort((a, b) => b[1] - a[1]).slice(1, TOP * 2)) console.log(`${ms(t)}  ${k}`);
}

/** A sampling heap profile: bytes allocated per request, by the allocating function and with its callees. */
function reportAlloc(p) {
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const f = node.callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;
    const here = [...stack, name];
    if (node.selfSize) {
      total += node.selfSize;
      self.set(name, (self.get(name) ?? 0) + node.selfSize);
      for (const k of new Set(here)) inclusive.set(k, (inclusive.get(k) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, here);
  };
  walk(p.head, []);
  const kib = (b) => (b / 1024 / N).toFixed(1).padStart(7);
  console.log(`${SCENARIO}: ${N} requests, ${kib(total).trim()} KiB allocated a request in the Worker's isolate (sampled; unminified bundle)`);
  console.log("\nmost allocated by the function itself (KiB a request):");
  for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${kib(b)}  ${k}`);
  console.log("\nmost allocated with what it calls (KiB a request; an await cuts the stack):");
  for (const [k, b] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(1, TOP * 2)) console.log(`${kib(b)}  ${k}`);
}
