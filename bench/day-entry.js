// Bench-only Worker entry for `npm run bench:day` (bench/day.mjs; never deployed): Tern's own entry with every billed
// unit of the Workers free plan counted from inside, by invocation kind (fetch, queue batch per queue, cron, Durable
// Object calls per class):
// - invocations: fetch requests (by kind of path), queue batches and messages (arrived, acked, retried; for DELIVERY
//   also the inboxes they carried), cron runs, DO calls (HTTP fetch, RPC method calls, WebSocket messages, alarms) and
//   their active wall time per object;
// - work a fetch invocation left running after its response (ctx.waitUntil: an inbox POST processes its activity
//   there, src/background/effects-runner.ts runAfterResponse): promises still pending (`inflight`), and per request the number
//   pending when the response left, in the response header `x-bench-after` (bench only);
// - queue messages SENT per queue, by who sent them and by type (a JOBS pack lists its effects' types; a DELIVERY
//   message is a `pack` of inboxes or a `single` retry, its inboxes counted), with their size in 64 KB units (one
//   queue operation per 64 KB written, read or deleted);
// - D1 rows read / written through the same counter as Server-Timing (src/lib/limits/d1-counter.ts), per kind (an inbox
//   POST's rows, its after-response processing included, under "inbox"; other requests' under "fetch");
// - D1 round trips in total (`d1n` on the control endpoint; per request, the response headers `x-bench-rt0` / `x-bench-rt`:
//   the total when it began and when its response left), so the bench can estimate CPU without local D1;
// - R2 operations: class A (put, list, multipart), class B (get, head), free (delete).
// Each kind gets its own wrapped env (cached per env object: Tern caches per env in WeakMaps).
// Durable Objects run in the same isolate as the Worker locally (workerd), so their counters share this module's state;
// with --dos-apart they run in another process (bench/services-host.mjs, this same entry, answering bench/do-remote.js's
// calls at its PATH), whose counters the control request adds to this one's (`dos`, and the `do:*` kinds of `d1` and
// `r2`). With --queues-apart that process also runs the queues: messages sent here go there (bench/queue-remote.js) and
// its relay hands each batch back to this entry's queue handler (BATCH_PATH), so holding and stepping work as before.
// Control (bench only):
//   GET /__bench/day                 → the counters (`d1n`: D1 round trips so far, all kinds together)
//   GET /__bench/day?reset=1         → zero them first (held state kept)
//   GET /__bench/day?hold=jobs,delivery / ?release=jobs
//   GET /__bench/day?step=<queue>    → let ONE held batch of that queue run; answers when it has finished (≤ 120 s),
//                                      with what the batch held (`stepped.batch`: messages, inboxes, types)
//   GET /__bench/day?settle=1        → answers once no fetch invocation has waitUntil work pending (≤ 120 s)
//   GET /__bench/day?cron=<ms>       → run the cron handler once with that scheduledTime, waitUntil included
import tern, { HomeFeed as TernHomeFeed, RateLimiter as TernRateLimiter, Streaming as TernStreaming } from "../src/index";
import { countingD1 } from "../src/lib/limits/d1-counter";
import { countedBatch, countingQueue } from "./entry-counters.js";
import { remoteD1 } from "./d1-remote.js";
import { PATH as DO_PATH, remoteNamespace, serveDurableObject } from "./do-remote.js";
import { PATH as R2_PATH, remoteBucket, serveR2 } from "./r2-remote.js";
import { BATCH_PATH, remoteQueue, SEND_PATH, serveQueueSend, serveRelayedBatch } from "./queue-remote.js";

const PATH = "/__bench/day";
// Waiting is on events, never on a polling timer: a held consumer or a waiting control request that woke every few ms
// ran in this isolate during the very invocation being measured, and its wake-ups were counted as that invocation's
// CPU (a step that waited a second for the queue simulator's next batch cost ~50 ms of polling).
const wakers = new Map(); // event name → resolvers of those waiting for it
/** Resolves at the next `wake(event)`, or after `ms` (a safety net, not a poll). */
const nextEvent = (event, ms) =>
  new Promise((r) => {
    const timer = setTimeout(r, ms);
    const list = wakers.get(event) ?? [];
    list.push(() => {
      clearTimeout(timer);
      r();
    });
    wakers.set(event, list);
  });
const wake = (event) => {
  const list = wakers.get(event);
  wakers.delete(event);
  for (const r of list ?? []) r();
};

const zero = () => ({
  fetch: {}, // kind → count
  after: {}, // fetch kind → { requests: with work pending after the response, promises: waitUntil calls }
  scheduled: 0,
  queues: {}, // name → { batches, arrived, acked, retried, sizes: {n: count}, inboxes, types: {type: n} }
  sent: {}, // queue → { messages, units, delayed, inboxes, by: {sender: n}, types: {type: n}, packs: {key: n}, packSizes: {n: count} }
  d1: {}, // kind → { n, q, r, w }
  r2: {}, // kind → { a, b, free, ops: {method: n}, bytes: stored by put and multipart parts }
  images: {}, // kind → { info, transformations }
  dos: {}, // class → { requests, byMethod: {}, activeMs }
});
let s = zero();
const held = new Set();
const permits = {};
const waiting = {};
const lastBatch = {}; // queue → what its last batch held
// waitUntil promises of fetch invocations still pending (not reset: it is a state, not a count).
let inflight = 0;
const settled = [];

/** D1 round trips so far, all kinds together (a measured invocation's = the difference around it). */
const d1Total = () => Object.values(s.d1).reduce((a, c) => a + (c.n ?? 0), 0);

const d1Counter = (kind) => {
  s.d1[kind] ??= { n: 0, q: 0, r: 0, w: 0 };
  return s.d1[kind];
};
// countingD1 keeps the counter object it is given; this one forwards to the current `s` (so reset works).
const routedCounter = (kind) => {
  const c = {};
  for (const k of ["n", "q", "r", "w", "rawUncounted"]) {
    Object.defineProperty(c, k, {
      get: () => d1Counter(kind)[k],
      set: (v) => {
        d1Counter(kind)[k] = v;
      },
    });
  }
  return c;
};

function queueStats(name) {
  s.queues[name] ??= { batches: 0, arrived: 0, acked: 0, retried: 0, sizes: {}, inboxes: 0, types: {} };
  return s.queues[name];
}

/** A DELIVERY message: a pack of inboxes (a new activity) or one inbox (a retry). */
const inboxCount = (body) => (Array.isArray(body?.inboxes) ? body.inboxes.length : body?.inbox ? 1 : 0);

function typesOf(queue, body) {
  if (queue === "delivery") return [Array.isArray(body?.inboxes) ? "pack" : "single"];
  if (queue !== "jobs") return [queue];
  if (body?.type === "effects") return (body.effects ?? []).map((e) => String(e?.type ?? "?"));
  return [String(body?.type ?? "?")];
}

function countSend(queue, sender, body, opts) {
  s.sent[queue] ??= { messages: 0, units: 0, delayed: 0, inboxes: 0, by: {}, types: {}, packs: {}, packSizes: {} };
  const t = s.sent[queue];
  let size = 0;
  try {
    size = JSON.stringify(body ?? null).length;
  } catch {
    size = 0;
  }
  t.messages++;
  t.units += Math.max(1, Math.ceil(size / 65_536));
  if (opts?.delaySeconds) t.delayed++;
  t.by[sender] = (t.by[sender] ?? 0) + 1;
  const types = typesOf(queue, body);
  for (const k of types) t.types[k] = (t.types[k] ?? 0) + 1;
  const pack = [...new Set(types)].sort().join("+") || "(empty)";
  t.packs[pack] = (t.packs[pack] ?? 0) + 1;
  if (queue === "delivery") {
    const n = inboxCount(body);
    t.inboxes += n;
    const k = `${types[0]} of ${n}`;
    t.packSizes[k] = (t.packSizes[k] ?? 0) + 1;
  }
}

const R2_CLASS = {
  put: "a",
  list: "a",
  createMultipartUpload: "a",
  resumeMultipartUpload: "a",
  get: "b",
  head: "b",
  delete: "free",
};
/** The Images binding: `info` calls, and each `input(…)` chain as one transformation (what the free plan counts). */
function countingImages(images, kind) {
  if (!images) return images;
  return new Proxy(images, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== "function") return v;
      return (...args) => {
        s.images[kind] ??= { info: 0, transformations: 0 };
        if (prop === "info") s.images[kind].info++;
        if (prop === "input") s.images[kind].transformations++;
        return v.apply(target, args);
      };
    },
  });
}

function countingR2(bucket, kind) {
  if (!bucket) return bucket;
  return new Proxy(bucket, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== "function") return v;
      return (...args) => {
        s.r2[kind] ??= { a: 0, b: 0, free: 0, ops: {} };
        const c = s.r2[kind];
        const cls = R2_CLASS[prop] ?? "a";
        c[cls]++;
        c.ops[prop] = (c.ops[prop] ?? 0) + 1;
        const r = v.apply(target, args);
        if (prop === "put")
          Promise.resolve(r)
            .then((obj) => {
              c.bytes = (c.bytes ?? 0) + (obj?.size ?? 0);
            })
            .catch(() => {});
        // A multipart upload's parts and completion are class A too.
        if (prop === "createMultipartUpload" || prop === "resumeMultipartUpload") {
          return Promise.resolve(r).then((up) =>
            up
              ? new Proxy(up, {
                  get(t2, p2) {
                    const f = Reflect.get(t2, p2);
                    if (typeof f !== "function") return f;
                    return (...a2) => {
                      if (p2 === "uploadPart") c.bytes = (c.bytes ?? 0) + (a2[1]?.byteLength ?? a2[1]?.size ?? 0);
                      if (p2 === "uploadPart" || p2 === "complete") {
                        c.a++;
                        c.ops[`multipart.${String(p2)}`] = (c.ops[`multipart.${String(p2)}`] ?? 0) + 1;
                      }
                      return f.apply(t2, a2);
                    };
                  },
                })
              : up,
          );
        }
        return r;
      };
    },
  });
}

/** --dos-apart: every Durable Object namespace of the config, as shims to the services host (bench/do-remote.js). */
const remoteNamespaces = (env) =>
  Object.fromEntries(
    Object.keys(env)
      .filter((b) => typeof env[b]?.idFromName === "function")
      .map((b) => [b, remoteNamespace(env.SERVICES_REMOTE, b)]),
  );

/** A queue producer binding: this process's, or with --queues-apart the services host's (bench/queue-remote.js). */
const queueOf = (env, binding) => (env.BENCH_QUEUES_APART && env[binding] ? remoteQueue(env.SERVICES_REMOTE, binding) : env[binding]);

const wrappedEnvs = new WeakMap();
function wrapEnv(env, kind) {
  let m = wrappedEnvs.get(env);
  if (!m) {
    m = new Map();
    wrappedEnvs.set(env, m);
  }
  let w = m.get(kind);
  if (!w) {
    w = {
      ...env,
      // --d1-apart: D1 in another process (bench/d1-remote.js); otherwise the local binding.
      DB: countingD1(env.D1_REMOTE ? remoteD1(env.D1_REMOTE) : env.DB, routedCounter(kind), { rows: true }),
      JOBS: countingQueue(queueOf(env, "JOBS"), (body, opts) => countSend("jobs", kind, body, opts)),
      DELIVERY: countingQueue(queueOf(env, "DELIVERY"), (body, opts) => countSend("delivery", kind, body, opts)),
      // --dos-apart (--apart): R2 in that other process too (bench/r2-remote.js): its local simulator's work is not the Worker's.
      MEDIA: countingR2(env.BENCH_DOS_APART && env.SERVICES_REMOTE ? remoteBucket(env.SERVICES_REMOTE) : env.MEDIA, kind),
      IMAGES: countingImages(env.IMAGES, kind),
      // --dos-apart: the Durable Objects in another process (bench/do-remote.js); otherwise the local namespaces.
      ...(env.BENCH_DOS_APART ? remoteNamespaces(env) : {}),
    };
    m.set(kind, w);
  }
  return w;
}

// ---- Durable Objects: each class wrapped so every billed call is counted and timed ----

function doStats(cls) {
  s.dos[cls] ??= { requests: 0, byMethod: {}, activeMs: 0, objects: 0 };
  return s.dos[cls];
}

/** Active wall time per object: overlapping calls on one object are counted once. */
function tracked(self, cls, method, fn) {
  const d = doStats(cls);
  d.requests++;
  d.byMethod[method] = (d.byMethod[method] ?? 0) + 1;
  self.__active = (self.__active ?? 0) + 1;
  if (self.__active === 1) self.__since = Date.now();
  const done = () => {
    self.__active--;
    if (self.__active === 0) doStats(cls).activeMs += Date.now() - self.__since;
  };
  let r;
  try {
    r = fn();
  } catch (e) {
    done();
    throw e;
  }
  return Promise.resolve(r).finally(done);
}

function instrument(Base, cls, methods) {
  const C = class extends Base {
    constructor(ctx, env) {
      super(ctx, wrapEnv(env, `do:${cls}`));
      doStats(cls).objects++;
    }
  };
  for (const m of methods) {
    const orig = Base.prototype[m];
    if (typeof orig !== "function") continue;
    Object.defineProperty(C.prototype, m, {
      value(...args) {
        return tracked(this, cls, m, () => orig.apply(this, args));
      },
      writable: true,
      configurable: true,
    });
  }
  return C;
}

export const HomeFeed = instrument(TernHomeFeed, "HomeFeed", ["regenerate", "alarm"]);
export const RateLimiter = instrument(TernRateLimiter, "RateLimiter", ["hit", "count", "undo", "fetch", "alarm"]);
export const Streaming = instrument(TernStreaming, "Streaming", [
  "fetch",
  "webSocketMessage",
  "webSocketClose",
  "webSocketError",
  "alarm",
  "deliver",
  "kill",
  "routerSetHub",
  "routerListening",
  "routerPublishIfCurrent",
  "routerPublish",
]);

// ---- control ----

async function control(url, env) {
  const p = url.searchParams;
  if (p.get("reset")) s = zero();
  for (const n of (p.get("hold") ?? "").split(",").filter(Boolean)) held.add(n);
  for (const n of (p.get("release") ?? "").split(",").filter(Boolean)) {
    held.delete(n);
    wake(`permit:${n}`);
  }
  const step = p.get("step");
  let stepped = null;
  if (step) {
    const q = queueStats(step);
    const target = q.batches + 1;
    permits[step] = (permits[step] ?? 0) + 1;
    wake(`permit:${step}`);
    const t0 = Date.now();
    while (q.batches < target && Date.now() - t0 < 120_000) await nextEvent(`batch:${step}`, 120_000);
    stepped = { ok: q.batches >= target, ms: Date.now() - t0, batch: lastBatch[step] ?? null };
    // Whatever was not used is taken back, so a late batch stays held.
    if (!stepped.ok) permits[step] = Math.max(0, permits[step] - 1);
  }
  let settle = null;
  if (p.get("settle")) {
    const t0 = Date.now();
    if (inflight > 0) {
      let timer;
      await Promise.race([new Promise((r) => settled.push(r)), new Promise((r) => (timer = setTimeout(r, 120_000)))]);
      clearTimeout(timer);
    }
    settle = { ok: inflight === 0, ms: Date.now() - t0 };
  }
  const cron = p.get("cron");
  if (cron) {
    const waits = [];
    const ctx = { waitUntil: (pr) => waits.push(pr), passThroughOnException() {} };
    s.scheduled++;
    await tern.scheduled({ scheduledTime: Number(cron), cron: "* * * * *", noRetry() {} }, wrapEnv(env, "cron"), ctx);
    await Promise.allSettled(waits);
  }
  const own = { ...s, d1n: d1Total(), held: [...held], waiting, inflight, stepped, settle, now: Date.now() };
  return new Response(JSON.stringify(env.BENCH_DOS_APART ? await withObjectsHost(own, env.SERVICES_REMOTE, p.get("reset")) : own), {
    headers: { "content-type": "application/json" },
  });
}

/** --dos-apart: the counters with the objects' host's added (its `dos`, and its `d1` and `r2` kinds, all `do:*`). */
async function withObjectsHost(own, host, reset) {
  const res = await host.fetch(`http://do${PATH}${reset ? "?reset=1" : ""}`);
  const theirs = await res.json();
  return {
    ...own,
    dos: theirs.dos,
    d1: { ...own.d1, ...theirs.d1 },
    r2: { ...own.r2, ...theirs.r2 },
    // `d1n` stays this process's: a measured invocation's round trips are the Worker's own.
    objectsD1n: theirs.d1n,
  };
}

function fetchKind(pathname) {
  if (pathname === "/inbox" || /^\/users\/[^/]+\/inbox$/.test(pathname) || pathname === "/actor/inbox") return "inbox";
  if (pathname.startsWith("/api/v1/streaming")) return "streaming";
  if (pathname.startsWith("/api/")) return "api";
  return "other";
}

function queueName(batch) {
  if (batch.queue.startsWith("tern-jobs")) return "jobs";
  if (batch.queue.startsWith("tern-delivery")) return "delivery";
  if (batch.queue.startsWith("tern-dead")) return "dead-letters";
  return batch.queue;
}

/** Counts a fetch invocation's waitUntil promises while they are pending; `own()` says how many of its own are. */
function trackingCtx(ctx, kind) {
  let own = 0;
  const waitUntil = (promise) => {
    inflight++;
    own++;
    s.after[kind] ??= { requests: 0, promises: 0 };
    s.after[kind].promises++;
    const done = () => {
      inflight--;
      own--;
      if (inflight === 0) for (const r of settled.splice(0)) r();
    };
    return ctx.waitUntil(Promise.resolve(promise).finally(done));
  };
  const wrapped = new Proxy(ctx, {
    get(target, prop) {
      if (prop === "waitUntil") return waitUntil;
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { ctx: wrapped, own: () => own };
}

export default {
  ...tern,
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === PATH) return control(url, env);
    if (url.pathname === DO_PATH) return serveDurableObject(request, env);
    if (url.pathname === R2_PATH) return serveR2(request, env);
    if (url.pathname === SEND_PATH) return serveQueueSend(request, env);
    if (url.pathname === BATCH_PATH) return serveRelayedBatch(request, env, ctx, onQueue);
    const kind = fetchKind(url.pathname);
    s.fetch[kind] = (s.fetch[kind] ?? 0) + 1;
    const rt0 = d1Total();
    const t = trackingCtx(ctx, kind);
    // An inbox POST's rows (its processing after the response included) are counted apart from other requests'.
    const res = await tern.fetch(request, wrapEnv(env, kind === "inbox" ? "inbox" : "fetch"), t.ctx);
    const pending = t.own();
    if (pending > 0) {
      s.after[kind] ??= { requests: 0, promises: 0 };
      s.after[kind].requests++;
    }
    // The bench reads workerd's CPU after the work a request left running: the header says whether to wait for it.
    if (res.status === 101 || res.webSocket) return res;
    const out = new Response(res.body, res);
    out.headers.set("x-bench-after", String(pending));
    // D1 round trips (all kinds) when the request began and when its response left: the difference is the request's
    // (the after-response work's are read from `?settle=1`'s `d1n`).
    out.headers.set("x-bench-rt0", String(rt0));
    out.headers.set("x-bench-rt", String(d1Total()));
    return out;
  },
  queue: onQueue,
};

/** A queue batch (held while its queue is held), counted, then Tern's consumer. */
async function onQueue(batch, env, ctx) {
  const name = queueName(batch);
  const q = queueStats(name);
  q.arrived += batch.messages.length;
  if (held.has(name)) {
    waiting[name] = (waiting[name] ?? 0) + 1;
    // Every held batch wakes at a permit or a release; the first to run takes the permit, the others wait again.
    while (held.has(name) && !(permits[name] > 0)) await nextEvent(`permit:${name}`, 600_000);
    if (permits[name] > 0) permits[name]--;
    waiting[name]--;
  }
  const n = batch.messages.length;
  q.sizes[n] = (q.sizes[n] ?? 0) + 1;
  const seen = { messages: n, inboxes: 0, types: {} };
  for (const m of batch.messages) {
    for (const k of typesOf(name, m.body)) {
      q.types[k] = (q.types[k] ?? 0) + 1;
      seen.types[k] = (seen.types[k] ?? 0) + 1;
    }
    if (name === "delivery") seen.inboxes += inboxCount(m.body);
  }
  q.inboxes += seen.inboxes;
  lastBatch[name] = seen;
  const wrapped = countedBatch(batch, {
    onAck() {
      q.acked++;
    },
    onRetry() {
      q.retried++;
    },
  });
  try {
    return await tern.queue(wrapped, wrapEnv(env, `queue:${name}`), ctx);
  } finally {
    q.batches++;
    wake(`batch:${name}`);
  }
}
