// Builds the Hono app: shared middleware (config, the request's D1 session and round-trip counter, viewer, CORS,
// errors), then every route module. Route modules own their paths; this file only mounts them.
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "./context";
import { createDb } from "./db/client";
import { BOOKMARK_HEADER, isSafeMethod, noteBookmark, requestFacts, sendBookmark, startFor } from "./db/session";
import { Effects } from "./effects/collector";
import { sendEffects } from "./effects/send";
import { runAfterResponse } from "./background/effects-runner";
import { readConfig } from "./env";
import { countingD1, type D1Count, serverTiming } from "./lib/limits/d1-counter";
import { errorResponse, notFound } from "./lib/http/errors";
import { PrefixRouter } from "./lib/http/prefix-router";
import { expireInstanceCache, mayChangeInstance } from "./services/instance/instance-cache";
import { applyRateLimits, startRateLimits } from "./http/rate-limit";
import { bearerToken, loadViewerAndUse, markTokenUsed } from "./oauth/viewer";
import { mount } from "./route-group";
import { mounts } from "./routes";

export function buildApp() {
  // Hono's trie router, built per path prefix as requests arrive (src/lib/http/prefix-router.ts). Hono's default also
  // tried a RegExp router first, which cannot take a fixed path beside a parameter at the same place
  // (`/accounts/verify_credentials` and `/accounts/:id`), so it was built and thrown away on every cold isolate.
  const app = new Hono<AppEnv>({ strict: false, router: new PrefixRouter() });
  /** Requests answered 404 from a replica, to be asked again on the primary: the first run's counter. */
  const recheck = new WeakMap<Request, D1Count>();

  app.use("*", async (c, next) => {
    if (hostilePath(c.req.url)) return notFoundResponse(c.req.path);
    const prior = recheck.get(c.req.raw);
    // A re-check adds to the first run's counts, so Server-Timing and the bench see both.
    const counter = prior ?? { n: 0 };
    c.set("d1", counter);
    const config = readConfig(c.env, c.req.url);
    c.set("config", config);
    c.set("fx", new Effects(config.origin, true));
    const token = bearerToken(c.req.raw);
    // One D1 session per request (src/db/session.ts): reads may go to a replica, writes go to the primary, and the
    // request reads its own writes. Where it starts: docs/architecture.md, "Reads and replicas".
    const start = startFor(requestFacts(c.req.raw, !!token, !!prior));
    const session = c.env.DB.withSession(start);
    c.set("d1Session", session);
    // Rows read and written are summed only in development and the benchmark (DEV_SERVER_TIMING, set by npm run dev).
    c.set("db", createDb(countingD1(session, counter, { rows: c.env.DEV_SERVER_TIMING === "true" })));
    c.set("viewer", null);
    c.set("invalidToken", false);
    const resolve = !!token && needsViewer(c.req.path);
    // The general rate limits count while the token is looked up (src/http/rate-limit.ts).
    startRateLimits(c, resolve ? token : null);
    let lastUseDue = false;
    if (token && resolve) {
      const loaded = await loadViewerAndUse(c.get("db"), token);
      if (loaded) {
        c.set("viewer", loaded.viewer);
        lastUseDue = loaded.lastUseDue;
      } else c.set("invalidToken", true);
    }
    await next();
    const viewer = c.get("viewer");
    if (lastUseDue && viewer) recordTokenUse(c, viewer.tokenId);
    // A staff write may have changed what the instance documents show: this isolate checks D1 on its next read.
    if (mayChangeInstance(c.req.method, c.req.path)) expireInstanceCache();
    // Effects leave after the handler, whatever it answered: a service records them only once its write committed.
    // A queue that refuses them leaves them in D1 for the cron (src/effects/pending.ts); if D1 refuses them too, the
    // write still committed, so the client hears of it as usual and the loss is logged.
    try {
      await sendEffects(c.env, c.get("fx"));
    } catch (e) {
      console.error("effects lost: neither the queue nor D1 took them", e instanceof Error ? e.message : e);
    }
    if (c.get("fx").hasAfterResponse) await runAfterResponse(c.env, c.executionCtx, c.get("fx"));
    const bookmark = session.getBookmark();
    noteBookmark(bookmark, c.req.method);
    // A page, a federation document or a media file that a replica did not have may have been written a moment ago
    // (a remote server fetching the note it was just sent): it is asked again on the primary before a 404 goes out.
    if (!prior && c.res.status === 404 && start !== "first-primary" && counter.n > 0 && isSafeMethod(c.req.method) && !needsViewer(c.req.path)) {
      recheck.set(c.req.raw, counter);
    }
    sendBookmark(c, bookmark);
    c.res.headers.append("Server-Timing", serverTiming(counter));
  });

  const corsMw = cors({
    origin: "*",
    allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "Accept", BOOKMARK_HEADER],
    exposeHeaders: ["Link", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id", "Idempotency-Key", BOOKMARK_HEADER],
    maxAge: 86400,
  });
  for (const p of ["/api/*", "/oauth/token", "/oauth/revoke", "/.well-known/*", "/nodeinfo/*"]) app.use(p, corsMw);
  // After CORS, so a 429 carries the CORS headers too.
  app.use("*", applyRateLimits);

  for (const [path, group] of mounts) mount(app, path, group);

  app.notFound((c) => notFoundResponse(c.req.path));
  app.onError((err) => errorResponse(err));

  const dispatch = app.fetch;
  app.fetch = async (request, ...rest) => {
    const res = await dispatch(request, ...rest);
    if (res.status !== 404 || !recheck.has(request)) return res;
    await res.body?.cancel();
    return dispatch(request, ...rest);
  };
  return app;
}

/**
 * The token's last use (shown on the Apps and sessions page), at most once an hour: written after the response, on the
 * primary and outside the request's counted session, so it adds no round trip to the request.
 */
function recordTokenUse(c: Context<AppEnv>, tokenId: string) {
  const write = markTokenUsed(createDb(c.env.DB), tokenId)
    .run()
    .catch((e: unknown) => console.error("token last use not recorded", e instanceof Error ? e.message : e));
  try {
    c.executionCtx.waitUntil(write);
  } catch {
    // No execution context (a direct app.request): the write runs on its own.
  }
}

/** Only API and OAuth routes read bearer tokens; pages and federation do not. */
function needsViewer(path: string): boolean {
  return path.startsWith("/api/") || path.startsWith("/oauth/");
}

function notFoundResponse(path: string): Response {
  if (path.startsWith("/api/") || path.startsWith("/oauth/")) return errorResponse(notFound());
  return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=UTF-8" } });
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A path that names nothing on this server, whatever the route: control characters once decoded (NUL, CR/LF, TAB,
 * DEL, C1) or percent-encoding that is not UTF-8. Answered 404 before any route can put the text in a header, a
 * redirect or a query (where it used to surface as a 500).
 */
export function hostilePath(url: string): boolean {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return false;
  const q = url.indexOf("?", start);
  const h = url.indexOf("#", start);
  const end = Math.min(q < 0 ? url.length : q, h < 0 ? url.length : h);
  const raw = url.slice(start, end);
  if (CONTROL.test(raw)) return true;
  if (!raw.includes("%")) return false;
  try {
    return CONTROL.test(decodeURIComponent(raw));
  } catch {
    return true; // malformed escapes or bytes that are not UTF-8
  }
}
