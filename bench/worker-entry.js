// Bench-only Worker entry (never deployed): Tern's own entry, with the queue consumers instrumented so the benchmark
// can see work that runs off the request path. Per queue it counts batches, messages (acked / retried, by job type)
// and D1 round trips, statements, rows read and written (the same counter as the Server-Timing header), and it can
// HOLD a queue: a held consumer waits before running its batch, and miniflare's broker sends one batch at a time per
// queue, so everything behind it waits too. That separates the CPU of an inbox POST from the CPU of processing it. The wait is a 100 ms timer in
// the queue event itself (workerd cancels continuations resolved from another request's context, so a promise
// released by the control request would never resume). Everything else is Tern as is; the only extra work on
// requests is one string comparison.
//   GET /__bench/queues              → stats
//   GET /__bench/queues?reset=1      → zero the counters (held state kept)
//   GET /__bench/queues?hold=jobs    / ?release=jobs   (jobs | delivery)
import tern from "../src/index";
import { countingD1 } from "../src/lib/limits/d1-counter";
import { countedBatch } from "./entry-counters.js";

export * from "../src/index"; // the Durable Object classes

const PATH = "/__bench/queues";
const held = new Set();
let stats = {};

const emptyQueue = () => ({
  batches: 0,
  arrived: 0,
  acked: 0,
  retried: 0,
  d1: 0,
  statements: 0,
  rowsRead: 0,
  rowsWritten: 0,
  inflight: 0,
  lastActivity: Date.now(),
  byType: {},
});
const q = (name) => (stats[name] ??= emptyQueue());

function control(url) {
  const p = url.searchParams;
  if (p.get("reset")) stats = {};
  if (p.get("hold")) held.add(p.get("hold"));
  if (p.get("release")) held.delete(p.get("release"));
  return new Response(JSON.stringify({ held: [...held], queues: stats, now: Date.now() }), { headers: { "content-type": "application/json" } });
}

function queueName(batch) {
  if (batch.queue.startsWith("tern-jobs")) return "jobs";
  if (batch.queue.startsWith("tern-delivery")) return "delivery";
  return "other";
}

export default {
  ...tern,
  fetch(request, env, ctx) {
    if (request.url.includes(PATH)) {
      const url = new URL(request.url);
      if (url.pathname === PATH) return control(url);
    }
    return tern.fetch(request, env, ctx);
  },
  async queue(batch, env, ctx) {
    const name = queueName(batch);
    const s = q(name);
    s.arrived += batch.messages.length;
    while (held.has(name)) await new Promise((resolve) => setTimeout(resolve, 100));
    s.inflight++;
    const counter = { n: 0 };
    // A JOBS message is one effect or a pack of an action's effects (src/effects/send.ts): count each effect.
    const kinds = (m) =>
      name !== "jobs" ? [name] : m.body?.type === "effects" ? m.body.effects.map((e) => String(e?.type ?? "?")) : [String(m.body?.type ?? "?")];
    const wrapped = countedBatch(batch, {
      onAck(m) {
        s.acked++;
        for (const k of kinds(m)) s.byType[k] = (s.byType[k] ?? 0) + 1;
      },
      onRetry() {
        s.retried++;
      },
    });
    try {
      return await tern.queue(wrapped, { ...env, DB: countingD1(env.DB, counter, { rows: true }) }, ctx);
    } finally {
      s.inflight--;
      s.batches++;
      s.d1 += counter.n;
      s.statements += counter.q ?? 0;
      s.rowsRead += counter.r ?? 0;
      s.rowsWritten += counter.w ?? 0;
      s.lastActivity = Date.now();
    }
  },
};
