// Test helpers: users and tokens made through the real services, and a small HTTP client over SELF.
import { SELF, env } from "cloudflare:test";
import { createDb } from "../../src/db/client";
import { oauthApplications } from "../../src/db/schema";
import { readConfig } from "../../src/env";
import { snowflake } from "../../src/lib/text/ids";
import { createLocalAccount } from "../../src/services/accounts/local-accounts";
import { issueToken } from "../../src/services/auth/tokens";

export const ORIGIN = "http://tern.test";
export const cfg = () => readConfig(env, ORIGIN);
export const db = () => createDb(env.DB);

let seq = 0;

export interface TestUser {
  id: string;
  userId: string;
  username: string;
  token: string;
  api: Api;
}

export async function makeApp(name = "Test App", scopes = "read write follow push", redirect = "urn:ietf:wg:oauth:2.0:oob") {
  const id = snowflake();
  const clientId = `client-${id}`;
  const clientSecret = `secret-${id}`;
  await db().insert(oauthApplications).values({ id, name, website: null, redirectUris: redirect, scopes, clientId, clientSecret, createdAt: Date.now() });
  return { id, clientId, clientSecret };
}

export async function makeUser(
  username = `user${++seq}`,
  opts: { scopes?: string; roleId?: string | null; approved?: boolean; locked?: boolean } = {},
): Promise<TestUser> {
  const { accountId, userId } = await createLocalAccount(db(), cfg(), env, {
    username,
    email: `${username}@example.com`,
    password: "correct horse battery staple",
    approved: opts.approved ?? true,
    confirmed: true,
    roleId: opts.roleId ?? null,
  });
  if (opts.locked) await env.DB.prepare("UPDATE accounts SET locked = 1 WHERE id = ?").bind(accountId.padStart(20, "0")).run();
  const app = await makeApp();
  const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", {
    applicationId: app.id,
    userId,
    scopes: (opts.scopes ?? "read write follow push").split(" "),
    reuse: false,
  });
  return { id: accountId, userId, username, token: t.accessToken, api: api(t.accessToken) };
}

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export type Api = ReturnType<typeof api>;

export function api(token?: string) {
  const call = async (method: string, path: string, body?: unknown, type: "json" | "form" | "multipart" = "json"): Promise<Res> => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      if (type === "json") {
        headers["content-type"] = "application/json";
        payload = JSON.stringify(body);
      } else if (type === "form") {
        headers["content-type"] = "application/x-www-form-urlencoded";
        payload = body instanceof URLSearchParams ? body.toString() : new URLSearchParams(body as Record<string, string>).toString();
      } else {
        payload = body as FormData;
      }
    }
    const res = await SELF.fetch(`${ORIGIN}${path}`, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown, type?: "json" | "form" | "multipart") => call("POST", path, body ?? {}, type),
    put: (path: string, body?: unknown, type?: "json" | "form" | "multipart") => call("PUT", path, body ?? {}, type),
    patch: (path: string, body?: unknown, type?: "json" | "form" | "multipart") => call("PATCH", path, body ?? {}, type),
    delete: (path: string, body?: unknown) => call("DELETE", path, body),
  };
}

export const anon = api();

/** Parses a Link header into {next, prev} paths. */
export function links(h: Headers): { next?: string; prev?: string } {
  const out: { next?: string; prev?: string } = {};
  for (const part of (h.get("link") ?? "").split(",")) {
    const m = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part);
    if (m) {
      const u = new URL(m[1]);
      (out as any)[m[2]] = u.pathname + u.search;
    }
  }
  return out;
}

/**
 * Brings the Worker's background work to rest, then checks `fn` (which asserts by throwing) and returns its value.
 * "At rest" means: every ctx.waitUntil promise of earlier requests has settled and every captured JOBS message
 * (and every message those enqueue) has been run by the consumer's own code (queues.ts). That is all the background
 * work there is in these tests except Durable Object alarms (the HomeFeed rebuild), which the runtime fires by
 * itself and which have no event to wait on: only for those does `fn` get retried.
 *
 * No wall-clock limit applies while work is being done (a loaded machine only makes this slower; the test timeout
 * still bounds it). `fn` fails for good once it has failed at least 5 times with nothing left to run and `quietMs`
 * has passed since the first of those failures.
 */
export async function eventually<T>(fn: () => Promise<T> | T, quietMs = 10_000): Promise<T> {
  const { runQueuedJobs } = await import("./queues");
  let quietSince: number | undefined;
  let quietFailures = 0;
  let lastError: unknown;
  for (;;) {
    const ran = await settleBackgroundWork(runQueuedJobs);
    try {
      return await fn();
    } catch (e) {
      lastError = e;
    }
    if (ran > 0) {
      quietSince = undefined; // work was still arriving: not yet a failure
      quietFailures = 0;
      continue;
    }
    quietSince ??= Date.now();
    if (++quietFailures >= 5 && Date.now() - quietSince >= quietMs) throw lastError;
    await new Promise((r) => setTimeout(r, 25)); // only alarms are left to wait for
  }
}

/** Awaits pending waitUntil work and runs captured jobs until neither is left; returns how many jobs ran. */
async function settleBackgroundWork(runQueuedJobs: () => Promise<number>): Promise<number> {
  const waitUntil = await waitForWaitUntil();
  let total = 0;
  for (;;) {
    await waitUntil();
    const n = await runQueuedJobs();
    total += n;
    if (n === 0) return total;
  }
}

let waitUntilWaiter: (() => Promise<void>) | undefined;
/** The pool's own "await every ctx.waitUntil promise" (it runs it before popping a test's storage). */
async function waitForWaitUntil(): Promise<() => Promise<void>> {
  if (!waitUntilWaiter) {
    try {
      const internal: { waitForGlobalWaitUntil?: () => Promise<void> } = await import(/* @vite-ignore */ "cloudflare:test-internal" as string);
      waitUntilWaiter = internal.waitForGlobalWaitUntil ?? (async () => {});
    } catch {
      waitUntilWaiter = async () => {};
    }
  }
  return waitUntilWaiter;
}
