// Bench-only Worker entry for `npm run bench:streaming` (never deployed): Tern's own entry with two observers.
// - The Streaming Durable Object class is subclassed to count, per isolate, how many objects were constructed (an
//   object is constructed when it is first used and again each time it comes back from hibernation), how many client
//   WebSocket messages reached JavaScript (webSocketMessage; a `ping` answered by the runtime's auto-response does
//   not), and how many deliveries hubs took. Locally every object of the Worker runs in the one workerd isolate, so
//   the module's counters see them all; in production each object has its own and these figures would not exist.
// - The JOBS consumer logs when each batch started and ended and which fan-out chunks it carried, so the bench can
//   split "POST returned → event on the socket" into queue wait and what follows.
//   GET /__bench/streaming                → { counters, batches, d1, now } (d1: round trips, statements, rows read and
//                                           written by the Streaming objects and by the JOBS consumer)
//   GET /__bench/streaming?reset=1        → zero the counters and the batch log first
//   GET /__bench/streaming?presence=1     → also who the router says listens (`presence`: online, shared; wakes it)
//   GET /__bench/streaming?kick=1         → first sends 10 empty JOBS messages (a full batch)
import tern, { Streaming as TernStreaming } from "../src/index";
import { countingD1 } from "../src/lib/limits/d1-counter";
import { routerStub } from "../src/streaming/router";

export * from "../src/index"; // HomeFeed, RateLimiter (Streaming is replaced below)

const PATH = "/__bench/streaming";
const MAX_BATCHES = 5000;
const zero = () => ({ constructed: 0, wsMessages: 0, delivers: 0, deliversDone: 0, fetches: 0, publishes: 0, publishesDone: 0 });
let counters = zero();
/**
 * D1 round trips and rows read by the Streaming objects (hubs; the router reads none) and by the JOBS consumer (the
 * fan-out and the publish), through the counter the Server-Timing header uses.
 */
const zeroD1 = () => ({ objects: { n: 0, q: 0, r: 0, w: 0 }, jobs: { n: 0, q: 0, r: 0, w: 0 } });
let d1 = zeroD1();
let batches = [];

export class Streaming extends TernStreaming {
  constructor(ctx, env) {
    // The counter object is looked up at each call, so a reset counts from then on in objects already built.
    super(ctx, { ...env, DB: countingD1(env.DB, countersProxy("objects"), { rows: true }) });
    counters.constructed++;
  }
  async fetch(request) {
    counters.fetches++;
    return super.fetch(request);
  }
  async webSocketMessage(ws, message) {
    counters.wsMessages++;
    return super.webSocketMessage(ws, message);
  }
  deliver(items) {
    return counted("delivers", () => super.deliver(items));
  }
  routerPublish(events) {
    return counted("publishes", () => super.routerPublish(events));
  }
  routerPublishIfCurrent(version, events) {
    return counted("publishes", () => super.routerPublishIfCurrent(version, events));
  }
}

/** A D1Count whose fields land in `d1[which]` as it is now (after resets too). */
function countersProxy(which) {
  return new Proxy(
    {},
    {
      get: (_, k) => d1[which][k],
      set: (_, k, v) => {
        d1[which][k] = v;
        return true;
      },
    },
  );
}

/** Counts a call when it starts (`name`) and when it has ended (`nameDone`). */
async function counted(name, call) {
  counters[name]++;
  const r = await call();
  counters[`${name}Done`]++;
  return r;
}

async function control(url, env) {
  const p = url.searchParams;
  if (p.get("reset")) {
    counters = zero();
    batches = [];
    d1 = zeroD1();
  }
  if (p.get("kick")) {
    // A full batch of empty effect packs: the local queue broker dispatches a full batch at once (see bench/README.md,
    // "a stuck local queue").
    await env.JOBS.sendBatch(Array.from({ length: 10 }, () => ({ body: { type: "effects", effects: [] } })));
  }
  const body = { counters, batches, d1, now: Date.now() };
  if (p.get("presence")) body.presence = await routerStub(env).routerListening();
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

/** The fan-out chunks of a JOBS message: [{ statusId, cursor }] (a message is one effect or a pack of them). */
function fanouts(body) {
  const list = body?.type === "effects" && Array.isArray(body.effects) ? body.effects : [body];
  return list.filter((e) => e?.type === "fanout").map((e) => ({ statusId: String(e.statusId), cursor: e.cursor ?? null }));
}

export default {
  ...tern,
  fetch(request, env, ctx) {
    if (request.url.includes(PATH)) {
      const url = new URL(request.url);
      if (url.pathname === PATH) return control(url, env);
    }
    return tern.fetch(request, env, ctx);
  },
  async queue(batch, env, ctx) {
    const jobs = batch.queue.startsWith("tern-jobs");
    const entry = jobs ? { start: Date.now(), end: null, size: batch.messages.length, fanouts: batch.messages.flatMap((m) => fanouts(m.body)) } : null;
    if (entry) {
      batches.push(entry); // listed while it runs (end: null)
      if (batches.length > MAX_BATCHES) batches.splice(0, batches.length - MAX_BATCHES);
    }
    try {
      return await tern.queue(batch, jobs ? { ...env, DB: countingD1(env.DB, countersProxy("jobs"), { rows: true }) } : env, ctx);
    } finally {
      if (entry) entry.end = Date.now();
    }
  },
};
