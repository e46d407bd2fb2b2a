// The V8 inspector of Tern's isolate in a bench workerd (Miniflare started with `inspectorPort`): attach, record a CPU
// or allocation profile, and print where the time or the bytes went. Used by bench/profile.mjs (one kind of request
// repeated) and bench/day.mjs --profile / --alloc (the replayed day's whole mix). Names are only readable when the
// bundle is unminified (`wrangler deploy --dry-run --no-minify`).
import WebSocket from "ws";

/** Connects to the isolate whose inspector title names the Worker; returns `cdp(method, params)` and `close()`. */
export async function attachIsolate(inspectorPort, worker = "tern") {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
  const target = targets.find((t) => t.title?.includes(`core:user:${worker}`));
  if (!target) throw new Error(`no inspector target for the Worker: ${targets.map((t) => t.title).join(", ")}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl, { maxPayload: 2 ** 30 });
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
  return { cdp, close: () => ws.close() };
}

/** CPU profiling (50 µs samples) from now until `stop()`, which resolves to the profile. */
export async function startCpuProfile({ cdp }) {
  await cdp("Profiler.enable");
  await cdp("Profiler.setSamplingInterval", { interval: 50 });
  await cdp("Profiler.start");
  return async () => (await cdp("Profiler.stop")).result.profile;
}

/**
 * Sampling heap profiling (1 KiB interval) until `stop()`: everything allocated, or with `survivors` only what
 * outlived a scavenge (objects a minor GC collected left out): what scavenges copy and promote, the costly part.
 */
export async function startAllocProfile({ cdp }, { survivors = false } = {}) {
  await cdp("HeapProfiler.enable");
  await cdp("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors });
  return async () => (await cdp("HeapProfiler.stopSampling")).result.profile;
}

const frameName = (f) => `${f.functionName || "(anonymous)"} ${f.url.split("/").pop()}:${f.lineNumber + 1}`;

/** The functions with the most self and inclusive time, in ms per `n` (requests or invocations). */
export function reportCpu(p, { n, label, top = 25 }) {
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const self = new Map();
  for (const [i, id] of p.samples.entries()) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  const selfBy = new Map();
  const incBy = new Map();
  let busy = 0;
  for (const [id, t] of self) {
    const node = byId.get(id);
    if (node.callFrame.functionName === "(idle)") continue;
    busy += t;
    const k0 = frameName(node.callFrame);
    selfBy.set(k0, (selfBy.get(k0) ?? 0) + t);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frameName(byId.get(cur).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      incBy.set(k, (incBy.get(k) ?? 0) + t);
    }
  }
  const ms = (us) => (us / 1000 / n).toFixed(3).padStart(7);
  console.log(`${label}: the Worker's isolate busy ${ms(busy).trim()} ms per ${n > 1 ? `one of ${n}` : "run"} (sampled; unminified bundle)`);
  console.log("\nmost self time (ms each):");
  for (const [k, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)}  ${k}`);
  console.log("\nmost inclusive time (ms each):");
  for (const [k, t] of [...incBy].sort((a, b) => b[1] - a[1]).slice(1, top * 2)) console.log(`${ms(t)}  ${k}`);
}

/** A sampling heap profile: KiB allocated per `n`, by the allocating function and with its callees. */
export function reportAlloc(p, { n, label, top = 25 }) {
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const name = frameName(node.callFrame);
    const here = [...stack, name];
    if (node.selfSize) {
      total += node.selfSize;
      self.set(name, (self.get(name) ?? 0) + node.selfSize);
      for (const k of new Set(here)) inclusive.set(k, (inclusive.get(k) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, here);
  };
  walk(p.head, []);
  const kib = (b) => (b / 1024 / n).toFixed(1).padStart(7);
  console.log(`${label}: ${kib(total).trim()} KiB allocated each in the Worker's isolate (sampled; unminified bundle)`);
  console.log("\nmost allocated by the function itself (KiB each):");
  for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${kib(b)}  ${k}`);
  console.log("\nmost allocated with what it calls (KiB each; an await cuts the stack):");
  for (const [k, b] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(1, top * 2)) console.log(`${kib(b)}  ${k}`);
}
