// Bench-only Worker entry for `npm run bench:soak` (never deployed): Tern's own entry, with the JOBS queue counted from
// both ends, so the soak can tell how far behind the consumer is while the load runs.
// - Sent: every message given to the JOBS binding (send / sendBatch), by requests and by the consumer itself (a
//   fan-out chunk re-enqueues the next one, notifications enqueue pushes). Durable Objects get their own env and are
//   not counted (Tern's do not send JOBS messages).
// - Done: messages acked, retried; per acked message its queue lag (ack time − the message's enqueue timestamp).
// - Batches: size and wall time of each consumer run (Tern's consumer runs a batch's messages one after the other).
//   GET /__bench/soak                  → { sent, acked, retried, batches, inflight, lastActivity, now }
//   GET /__bench/soak?reset=1          → zero the counters first
//   GET /__bench/soak?lags=1           → also the lags (ms) and batch sizes / durations (ms) recorded so far
//   GET /__bench/soak?home=<padded id> → also home_feed rows with status_id ≥ that id ([account_id, status_id])
//   GET /__bench/soak?kick=1           → first sends 10 empty JOBS messages (see bench/README.md, "a stuck local queue")
import tern from "../src/index";
import { handleJobs } from "../src/background/effects-runner";
import { countedBatch, countingQueue } from "./entry-counters.js";

export * from "../src/index"; // the Durable Object classes

const PATH = "/__bench/soak";
const MAX_SAMPLES = 500_000;
const zero = () => ({ sent: 0, acked: 0, retried: 0, batches: 0, lags: [], sizes: [], durations: [] });
let s = zero();
// Not reset: a batch that runs across a reset still counts as running.
let inflight = 0;
let lastActivity = Date.now();

// One wrapped env per env object: Tern caches per env (rate limit configuration, instance documents) in WeakMaps.
const wrapped = new WeakMap();
function withCountedJobs(env) {
  let w = wrapped.get(env);
  if (!w) {
    w = {
      ...env,
      // The JOBS binding, counting what goes in.
      JOBS: countingQueue(env.JOBS, () => {
        s.sent++;
      }),
    };
    wrapped.set(env, w);
  }
  return w;
}

async function control(url, env) {
  const p = url.searchParams;
  if (p.get("reset")) s = zero();
  if (p.get("kick")) await withCountedJobs(env).JOBS.sendBatch(Array.from({ length: 10 }, () => ({ body: { type: "effects", effects: [] } })));
  const { lags, sizes, durations, ...counts } = s;
  const body = { ...counts, inflight, lastActivity, now: Date.now() };
  if (p.get("lags")) Object.assign(body, { lags, sizes, durations });
  const since = p.get("home");
  if (since) {
    const rows = await env.DB.prepare("SELECT account_id, status_id FROM home_feed WHERE status_id >= ?1").bind(since).raw();
    body.home = rows;
  }
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

export default {
  ...tern,
  fetch(request, env, ctx) {
    if (request.url.includes(PATH)) {
      const url = new URL(request.url);
      if (url.pathname === PATH) return control(url, env);
    }
    return tern.fetch(request, withCountedJobs(env), ctx);
  },
  async queue(batch, env, ctx) {
    if (!batch.queue.startsWith("tern-jobs")) return tern.queue(batch, withCountedJobs(env), ctx);
    const stats = s;
    const start = Date.now();
    inflight++;
    const counted = countedBatch(batch, {
      onAck(m) {
        stats.acked++;
        if (stats.lags.length < MAX_SAMPLES) stats.lags.push(Date.now() - new Date(m.timestamp).getTime());
      },
      onRetry() {
        stats.retried++;
      },
    });
    try {
      return await handleJobs(counted, withCountedJobs(env));
    } finally {
      inflight--;
      stats.batches++;
      if (stats.sizes.length < MAX_SAMPLES) {
        stats.sizes.push(batch.messages.length);
        stats.durations.push(Date.now() - start);
      }
      lastActivity = Date.now();
    }
  },
};
