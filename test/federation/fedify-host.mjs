// The plumbing every Fedify server of this suite shares (peer.mjs, and the small federations of migration.test.mjs and
// backfill-relay.test.mjs): a node:http server on 127.0.0.1, the request conversion to and from fedify's fetch API, the
// https→http shim for Tern on loopback, the queue, and waiting for an activity to arrive.
import { setMaxListeners } from "node:events";
import { createServer } from "node:http";
import { InProcessMessageQueue } from "@fedify/fedify";

/**
 * Fedify looks `acct:` handles up over https only; Tern under test speaks plain http on loopback. This shim is the
 * test's stand-in for a TLS terminator: https://<loopback host:port> → http:// for the hosts given, nothing else.
 * `onSent(request, response)` sees every request to those hosts. Returns the function that restores `fetch`.
 */
export function downgradeHttpsFor(hosts, onSent = () => {}) {
  const original = globalThis.fetch;
  const rewrite = (u) => (u.protocol === "https:" && hosts.has(u.host) ? new URL(`http://${u.host}${u.pathname}${u.search}`) : null);
  const observe = async (request) => {
    const res = await original(request);
    if (hosts.has(new URL(request.url).host)) onSent(request, res);
    return res;
  };
  globalThis.fetch = (input, init) => {
    if (input instanceof Request) {
      const to = rewrite(new URL(input.url));
      return observe(new Request(to ?? input.url, new Request(input, init)));
    }
    const to = rewrite(new URL(String(input)));
    return observe(new Request(to ?? input, init));
  };
  return () => {
    globalThis.fetch = original;
  };
}

/**
 * Listens on a port the kernel picks (no window between choosing a free port and binding it, in which another test
 * process could take it); requests get 503 until `serve(handler)` is called, once everything is set up.
 */
export async function listenLoopback() {
  let handle = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handle(req, res));
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    serve(handler) {
      handle = handler;
    },
  };
}

/** The options of every test federation here: in-memory queue started by hand, loopback allowed, no retries. */
export function testFederationOptions(origin) {
  return {
    queue: new InProcessMessageQueue({ pollInterval: { milliseconds: 100 } }),
    manuallyStartQueue: true,
    origin,
    allowPrivateAddress: true,
    outboxRetryPolicy: () => null, // a failed delivery is a test failure, not something to retry for hours
    inboxRetryPolicy: () => null,
  };
}

/** node:http request → fetch Request (`body` is the raw bytes, read once). */
export async function toFetchRequest(req, origin) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v != null) headers.set(k, v);
  }
  const url = new URL(req.url, origin);
  const request = new Request(url, { method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body });
  return { request, url, headers, body };
}

/** Hands `request` to fedify (404 / 406 for what it does not serve). */
export function fedifyFetch(federation, request) {
  return federation.fetch(request, {
    contextData: undefined,
    onNotFound: () => new Response("Not found", { status: 404 }),
    onNotAcceptable: () => new Response("Not acceptable", { status: 406 }),
  });
}

/** fetch Response → node:http response. */
export async function sendResponse(res, response) {
  const out = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(out);
}

/** Starts fedify's queue; returns { stop, done } (stop aborts it; done settles when it has stopped). */
export function startQueue(federation) {
  const queueStop = new AbortController();
  setMaxListeners(0, queueStop.signal); // fedify's queue adds a listener per poll
  const done = federation.startQueue(undefined, { signal: queueStop.signal }).catch(() => {});
  return { stop: () => queueStop.abort(), done };
}

/**
 * What a server received, and waiting on it: `record(entry)` stores an entry and wakes the waiters; `waitFor(pred,
 * timeoutMs, failure)` resolves with the first entry matching `pred`, checked now and on every arrival (no polling),
 * and rejects with `failure()`'s message after `timeoutMs`.
 */
export function arrivalLog() {
  const received = [];
  const arrivals = new Set();
  return {
    received,
    record(entry) {
      received.push(entry);
      for (const check of arrivals) check();
    },
    waitFor(pred, timeoutMs, failure) {
      const hit = received.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(pred);
          if (!found) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(failure()));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          arrivals.delete(check);
        };
        arrivals.add(check);
      });
    },
  };
}
