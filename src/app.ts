// Builds the Hono app: shared middleware (config, db, D1 round-trip counter, viewer, CORS, errors), then every route
// module. Route modules own their paths; this file only mounts them.
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "./context";
import { createDb } from "./db/client";
import { Effects } from "./effects/collector";
import { sendEffects } from "./effects/send";
import { readConfig } from "./env";
import { countingD1, serverTiming } from "./lib/d1-counter";
import { errorResponse, notFound } from "./lib/errors";
import { expireInstanceCache, mayChangeInstance } from "./lib/instance-cache";
import { applyRateLimits, startRateLimits } from "./lib/rate-limit";
import { bearerToken, loadViewer } from "./oauth/viewer";
import { mounts } from "./routes";

export function buildApp() {
  const app = new Hono<AppEnv>({ strict: false });

  app.use("*", async (c, next) => {
    if (hostilePath(c.req.url)) return notFoundResponse(c.req.path);
    const counter = { n: 0 };
    c.set("d1", counter);
    const config = readConfig(c.env, c.req.url);
    c.set("config", config);
    c.set("fx", new Effects(config.origin));
    // Rows read and written are summed only in development and the benchmark (DEV_SERVER_TIMING, set by npm run dev).
    c.set("db", createDb(countingD1(c.env.DB, counter, { rows: c.env.DEV_SERVER_TIMING === "true" })));
    c.set("viewer", null);
    c.set("invalidToken", false);
    const token = bearerToken(c.req.raw);
    const resolve = !!token && needsViewer(c.req.path);
    // The general rate limits count while the token is looked up (src/lib/rate-limit.ts).
    startRateLimits(c, resolve ? token : null);
    if (token && resolve) {
      const viewer = await loadViewer(c.get("db"), token);
      if (viewer) c.set("viewer", viewer);
      else c.set("invalidToken", true);
    }
    await next();
    // A staff write may have changed what the instance documents show: this isolate checks D1 on its next read.
    if (mayChangeInstance(c.req.method, c.req.path)) expireInstanceCache();
    // Effects leave after the handler, whatever it answered: a service records them only once its write committed.
    await sendEffects(c.env.JOBS, c.get("fx"));
    c.res.headers.append("Server-Timing", serverTiming(counter));
  });

  const corsMw = cors({
    origin: "*",
    allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "Accept"],
    exposeHeaders: ["Link", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id", "Idempotency-Key"],
    maxAge: 86400,
  });
  for (const p of ["/api/*", "/oauth/token", "/oauth/revoke", "/.well-known/*", "/nodeinfo/*"]) app.use(p, corsMw);
  // After CORS, so a 429 carries the CORS headers too.
  app.use("*", applyRateLimits);

  for (const [path, router] of mounts) app.route(path, router);

  app.notFound((c) => notFoundResponse(c.req.path));
  app.onError((err) => errorResponse(err));
  return app;
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
