// Security issue 7 (class 10): per-account action limits (statuses with reblogs, edits and scheduled statuses,
// favourites, follows with follow requests and tag follows, reports, deletes with unreblogs, media) and Mastodon's
// general API budgets (per account, per token, per IP with IPv6 /64 grouping, paging), with X-RateLimit-* headers.
// Budgets are filled by writing the counter in the RateLimiter Durable Object (or lowered through the env vars for a
// direct call of the Worker) instead of making hundreds of requests.
import { createExecutionContext, env, runInDurableObject, SELF, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { RATE_LIMIT_DEFAULTS } from "../../src/http/rate-limit";
import { issueToken } from "../../src/services/auth/tokens";
import { type Counters, limiter, readCounters } from "./rate-limiter-helpers";
import { ORIGIN, db, makeApp, makeUser, type TestUser } from "./helpers";

interface CallOpts {
  token?: string;
  ip?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Variables added to the Worker's env: the Worker is then called directly instead of through SELF. */
  vars?: Partial<Record<keyof Env, string>>;
}

async function call(method: string, path: string, o: CallOpts = {}) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.ip) headers["cf-connecting-ip"] = o.ip;
  let body: string | undefined;
  if (o.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.body);
  }
  const req = new Request(`${ORIGIN}${path}`, { method, headers, body });
  let res: Response;
  if (o.vars) {
    const ctx = createExecutionContext();
    res = await worker.fetch(req as Request<unknown, IncomingRequestCfProperties>, { ...env, ...o.vars } as Env, ctx);
    await waitOnExecutionContext(ctx);
  } else res = await SELF.fetch(req);
  const text = await res.text();
  let json: any = text;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body: json, headers: res.headers };
}

/** Sets counters as if `count` requests had been counted in a window opened now (or keeps a window's end). */
async function fill(subject: string, counts: Record<string, number>, periodSeconds = 3600) {
  await runInDurableObject(limiter(subject), async (obj, state) => {
    const all = (await state.storage.get<Counters>("c")) ?? {};
    for (const [name, count] of Object.entries(counts)) all[name] = { end: all[name]?.end ?? Date.now() + periodSeconds * 1000, count };
    await state.storage.put("c", all);
    (obj as unknown as { counters: Counters | null }).counters = null; // reload from storage on the next call
  });
}

const pad = (id: string) => id.padStart(20, "0");
async function count(sql: string, ...binds: unknown[]): Promise<number> {
  const r = await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>();
  return Number(r?.n ?? 0);
}

function expectThrottled(res: { status: number; body: any; headers: Headers }, limit: number, periodSeconds?: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: "Too many requests" });
  expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit));
  expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
  const reset = res.headers.get("x-ratelimit-reset")!;
  expect(reset).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/); // Mastodon's iso8601(6)
  const wait = Number(res.headers.get("retry-after"));
  expect(wait).toBeGreaterThan(0);
  if (periodSeconds) {
    expect(Date.parse(reset) - Date.now()).toBeGreaterThan((periodSeconds - 120) * 1000);
    expect(Date.parse(reset) - Date.now()).toBeLessThanOrEqual(periodSeconds * 1000);
    expect(wait).toBeGreaterThan(periodSeconds - 120);
  }
}

async function post(u: TestUser, text = "hello") {
  return call("POST", "/api/v1/statuses", { token: u.token, body: { status: text } });
}

describe("per-account action families", () => {
  it("statuses: Mastodon's 300 per 3 hours; the 301st is 429 with the headers and writes nothing", async () => {
    const u = await makeUser();
    const first = await post(u, "one");
    expect(first.status).toBe(200);
    // The code opened a 3-hour window for the family and counted the status in it.
    const [c] = [await readCounters(`acct:${u.id}`)];
    expect(c.statuses.count).toBe(1);
    expect(c.statuses.end - Date.now()).toBeGreaterThan(RATE_LIMIT_DEFAULTS.statuses.periodSeconds * 1000 - 60_000);
    expect(RATE_LIMIT_DEFAULTS.statuses).toEqual({ limit: 300, periodSeconds: 3 * 3600 });
    // 299 counted: the 300th is allowed and says nothing is left, the 301st is refused.
    await fill(`acct:${u.id}`, { statuses: 299 });
    const last = await post(u, "three hundredth");
    expect(last.status).toBe(200);
    expect(last.headers.get("x-ratelimit-limit")).toBe("300");
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    const before = await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id));
    const refused = await post(u, "three hundred and first");
    expectThrottled(refused, 300, 3 * 3600);
    // Reblogs, edits and scheduled statuses draw from the same family.
    const other = await makeUser();
    const theirs = await post(other, "boost me");
    expectThrottled(await call("POST", `/api/v1/statuses/${theirs.body.id}/reblog`, { token: u.token }), 300);
    expectThrottled(await call("PUT", `/api/v1/statuses/${first.body.id}`, { token: u.token, body: { status: "edited" } }), 300);
    const at = new Date(Date.now() + 3600_000).toISOString();
    expectThrottled(await call("POST", "/api/v1/statuses", { token: u.token, body: { status: "later", scheduled_at: at } }), 300);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id))).toBe(before);
    expect(await count("SELECT count(*) AS n FROM status_edits WHERE status_id = ?", pad(first.body.id))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM scheduled_statuses WHERE account_id = ?", pad(u.id))).toBe(0);
    // Another account is not affected.
    expect((await post(other, "still fine")).status).toBe(200);
  });

  it("statuses: a refused status (422) does not use the budget, as Mastodon counts created statuses", async () => {
    const u = await makeUser();
    await post(u);
    await fill(`acct:${u.id}`, { statuses: 299 });
    const bad = await call("POST", "/api/v1/statuses", { token: u.token, body: { status: "" } });
    expect(bad.status).toBe(422);
    expect((await readCounters(`acct:${u.id}`)).statuses.count).toBe(299);
    expect((await post(u, "the 300th")).status).toBe(200);
    expect((await post(u, "the 301st")).status).toBe(429);
  });

  it("statuses: a lowered limit through RATE_LIMIT_STATUSES counts real requests", async () => {
    const u = await makeUser();
    const vars = { RATE_LIMIT_STATUSES: "2" };
    for (const text of ["a", "b"]) {
      const r = await call("POST", "/api/v1/statuses", { token: u.token, body: { status: text }, vars });
      expect(r.status).toBe(200);
    }
    const r = await call("POST", "/api/v1/statuses", { token: u.token, body: { status: "c" }, vars });
    expectThrottled(r, 2, 3 * 3600);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id))).toBe(2);
    // `N/SECONDS` sets the period too; `off` lifts the family.
    const w = await makeUser();
    await call("POST", "/api/v1/statuses", { token: w.token, body: { status: "x" }, vars: { RATE_LIMIT_STATUSES: "1/60" } });
    expectThrottled(await call("POST", "/api/v1/statuses", { token: w.token, body: { status: "y" }, vars: { RATE_LIMIT_STATUSES: "1/60" } }), 1, 60);
    expect((await call("POST", "/api/v1/statuses", { token: w.token, body: { status: "z" }, vars: { RATE_LIMIT_STATUSES: "off" } })).status).toBe(200);
  });

  it("favourites: past the budget the favourite is 429 and not stored", async () => {
    const u = await makeUser();
    const other = await makeUser();
    const s = await post(other, "like me");
    await fill(`acct:${u.id}`, { favourites: RATE_LIMIT_DEFAULTS.favourites.limit });
    expectThrottled(await call("POST", `/api/v1/statuses/${s.body.id}/favourite`, { token: u.token }), RATE_LIMIT_DEFAULTS.favourites.limit);
    expect(await count("SELECT count(*) AS n FROM favourites WHERE account_id = ?", pad(u.id))).toBe(0);
    const ok = await call("POST", `/api/v1/statuses/${s.body.id}/favourite`, { token: other.token });
    expect(ok.status).toBe(200);
    expect(ok.body.favourited).toBe(true);
  });

  it("follows: 400 per 24 hours, follow requests and tag follows included; nothing is written past it", async () => {
    const u = await makeUser();
    const open = await makeUser();
    const locked = await makeUser(undefined, { locked: true });
    const first = await call("POST", `/api/v1/accounts/${open.id}/follow`, { token: u.token });
    expect(first.status).toBe(200);
    expect(first.body.following).toBe(true);
    const c = await readCounters(`acct:${u.id}`);
    expect(c.follows.count).toBe(1);
    expect(c.follows.end - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
    await fill(`acct:${u.id}`, { follows: 400 });
    expectThrottled(await call("POST", `/api/v1/accounts/${locked.id}/follow`, { token: u.token }), 400, 24 * 3600);
    expectThrottled(await call("POST", "/api/v1/tags/cats/follow", { token: u.token }), 400);
    expectThrottled(await call("POST", "/api/v1/follows", { token: u.token, body: { uri: locked.username } }), 400);
    expect(await count("SELECT count(*) AS n FROM follow_requests WHERE account_id = ?", pad(u.id))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM follows WHERE account_id = ?", pad(u.id))).toBe(1);
    expect(await count("SELECT count(*) AS n FROM tag_follows WHERE account_id = ?", pad(u.id))).toBe(0);
  });

  it("reports: 400 per 24 hours; the 401st is 429 and files nothing", async () => {
    const u = await makeUser();
    const target = await makeUser();
    const r1 = await call("POST", "/api/v1/reports", { token: u.token, body: { account_id: target.id, comment: "one" } });
    expect(r1.status).toBe(200);
    await fill(`acct:${u.id}`, { reports: 400 });
    expectThrottled(await call("POST", "/api/v1/reports", { token: u.token, body: { account_id: target.id, comment: "two" } }), 400, 24 * 3600);
    expect(await count("SELECT count(*) AS n FROM reports WHERE account_id = ?", pad(u.id))).toBe(1);
  });

  it("deletes: 30 per 30 minutes for DELETE /statuses/:id and unreblog; nothing is deleted past it", async () => {
    const u = await makeUser();
    const other = await makeUser();
    const mine = await post(u, "keep me");
    const theirs = await post(other, "boosted");
    const boost = await call("POST", `/api/v1/statuses/${theirs.body.id}/reblog`, { token: u.token });
    expect(boost.status).toBe(200);
    const gone = await post(u, "delete me");
    const del = await call("DELETE", `/api/v1/statuses/${gone.body.id}`, { token: u.token });
    expect(del.status).toBe(200);
    const c = await readCounters(`acct:${u.id}`);
    expect(c.deletes.count).toBe(1);
    expect(c.deletes.end - Date.now()).toBeGreaterThan(30 * 60_000 - 60_000);
    await fill(`acct:${u.id}`, { deletes: 30 });
    expectThrottled(await call("DELETE", `/api/v1/statuses/${mine.body.id}`, { token: u.token }), 30, 30 * 60);
    expectThrottled(await call("POST", `/api/v1/statuses/${theirs.body.id}/unreblog`, { token: u.token }), 30);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE id = ?", pad(mine.body.id))).toBe(1);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ? AND account_id = ?", pad(theirs.body.id), pad(u.id))).toBe(1);
  });

  it("media: the upload's answer reports the 30-per-30-minutes budget", async () => {
    const u = await makeUser();
    const f = new FormData();
    // 1×1 PNG
    const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="), (ch) =>
      ch.charCodeAt(0),
    );
    f.append("file", new File([png], "x.png", { type: "image/png" }));
    const res = await SELF.fetch(`${ORIGIN}/api/v2/media`, { method: "POST", headers: { authorization: `Bearer ${u.token}` }, body: f });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("29");
  });

  it("a request refused before its action (wrong scope) does not use the family budget", async () => {
    const u = await makeUser(undefined, { scopes: "read" });
    const res = await post(u);
    expect(res.status).toBe(403);
    expect((await readCounters(`acct:${u.id}`)).statuses?.count ?? 0).toBe(0);
  });
});

describe("general API budgets (rack-attack)", () => {
  it("every API answer carries X-RateLimit-*; Remaining goes down per request (per-token budget, 300 / 5 min)", async () => {
    const u = await makeUser();
    const a = await call("GET", "/api/v1/accounts/verify_credentials", { token: u.token });
    const b = await call("GET", "/api/v1/accounts/verify_credentials", { token: u.token });
    expect(a.status).toBe(200);
    expect(a.headers.get("x-ratelimit-limit")).toBe("300");
    expect(a.headers.get("x-ratelimit-remaining")).toBe("299");
    expect(b.headers.get("x-ratelimit-remaining")).toBe("298");
    const reset = a.headers.get("x-ratelimit-reset")!;
    expect(reset).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Date.parse(reset) - Date.now()).toBeGreaterThan(4 * 60_000);
    expect(Date.parse(reset) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    // Errors are counted and carry the headers too.
    const missing = await call("GET", "/api/v1/statuses/999999", { token: u.token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-ratelimit-remaining")).toBe("297");
    // CORS exposes them to browser clients.
    const cors = await call("GET", "/api/v1/accounts/verify_credentials", { token: u.token, headers: { origin: "https://elk.example" } });
    expect(cors.headers.get("access-control-expose-headers")).toMatch(/X-RateLimit-Remaining/i);
    expect(RATE_LIMIT_DEFAULTS.apiToken).toEqual({ limit: 300, periodSeconds: 300 });
    expect(RATE_LIMIT_DEFAULTS.apiAccount).toEqual({ limit: 1500, periodSeconds: 300 });
    expect(RATE_LIMIT_DEFAULTS.apiIp).toEqual({ limit: 300, periodSeconds: 300 });
  });

  it("past the per-token budget: 429 with headers and CORS; the account's other tokens still work until the account budget", async () => {
    const u = await makeUser();
    const app = await makeApp();
    const second = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["read", "write"], reuse: false });
    const vars = { RATE_LIMIT_API_PER_TOKEN: "3", RATE_LIMIT_API_PER_ACCOUNT: "5" };
    for (let i = 0; i < 3; i++) expect((await call("GET", "/api/v1/accounts/verify_credentials", { token: u.token, vars })).status).toBe(200);
    const refused = await call("GET", "/api/v1/accounts/verify_credentials", { token: u.token, vars, headers: { origin: "https://elk.example" } });
    expectThrottled(refused, 3, 300);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    // The other token has its own 3, but the account's 5 (1,500 by default) caps both together.
    expect((await call("GET", "/api/v1/accounts/verify_credentials", { token: second.accessToken, vars })).status).toBe(200);
    expectThrottled(await call("GET", "/api/v1/accounts/verify_credentials", { token: second.accessToken, vars }), 5, 300);
    // A refused request runs nothing: not even a write behind it.
    const before = await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id));
    expect((await call("POST", "/api/v1/statuses", { token: second.accessToken, body: { status: "x" }, vars })).status).toBe(429);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(u.id))).toBe(before);
    expect((await readCounters(`acct:${u.id}`)).statuses).toBeUndefined();
  });

  it("signed out, the budget is per IP and separate from the account's; another IP has its own", async () => {
    const ip = "198.51.100.7";
    const u = await makeUser();
    const anon1 = await call("GET", "/api/v1/instance", { ip });
    expect(anon1.headers.get("x-ratelimit-limit")).toBe("300");
    expect(anon1.headers.get("x-ratelimit-remaining")).toBe("299");
    // Signed in from the same IP: the token's budget, untouched by the IP's.
    const signed = await call("GET", "/api/v1/instance", { ip, token: u.token });
    expect(signed.headers.get("x-ratelimit-remaining")).toBe("299");
    const anon2 = await call("GET", "/api/v1/timelines/public", { ip });
    expect(anon2.headers.get("x-ratelimit-remaining")).toBe("298");
    // An exhausted IP refuses signed-out requests only.
    await fill(`ip:${ip}`, { api: 300 }, 300);
    expectThrottled(await call("GET", "/api/v1/instance", { ip }), 300);
    expect((await call("GET", "/api/v1/instance", { ip, token: u.token })).status).toBe(200);
    expect((await call("GET", "/api/v1/instance", { ip: "198.51.100.8" })).status).toBe(200);
    // A bad token does not escape the IP's budget.
    expectThrottled(await call("GET", "/api/v1/instance", { ip, token: "not-a-token" }), 300);
    // Neither does an app token (no user: Mastodon counts it as unauthenticated).
    const app = await makeApp();
    const appToken = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: null, scopes: ["read"], reuse: false });
    expectThrottled(await call("GET", "/api/v1/instance", { ip, token: appToken.accessToken }), 300);
  });

  it("IPv6 addresses share one budget per /64", async () => {
    await call("GET", "/api/v1/instance", { ip: "2001:db8:aa:bb::1" });
    const c = await readCounters("ip:2001:db8:aa:bb::/64");
    expect(c.api.count).toBe(1);
    const same = await call("GET", "/api/v1/instance", { ip: "2001:0db8:00aa:00bb:ffff:1:2:3" });
    expect(same.headers.get("x-ratelimit-remaining")).toBe("298");
    await fill("ip:2001:db8:aa:bb::/64", { api: 300 }, 300);
    expectThrottled(await call("GET", "/api/v1/instance", { ip: "2001:db8:aa:bb:1234::9" }), 300);
    expect((await call("GET", "/api/v1/instance", { ip: "2001:db8:aa:bc::1" })).status).toBe(200);
  });

  it("paging requests have their own 300 / 15 min budget, on API and ActivityPub collection paths alike", async () => {
    const ip = "198.51.100.20";
    const u = await makeUser();
    const first = await call("GET", "/api/v1/timelines/public?max_id=999999999999999", { ip });
    expect(first.status).toBe(200);
    const c = await readCounters(`ip:${ip}`);
    expect(c.paging.count).toBe(1);
    expect(c.paging.end - Date.now()).toBeGreaterThan(15 * 60_000 - 60_000);
    await fill(`ip:${ip}`, { paging: 300 }, 900);
    expectThrottled(await call("GET", "/api/v1/timelines/public?max_id=999999999999999", { ip }), 300, 900);
    expectThrottled(await call("GET", `/users/${u.username}/outbox?page=true`, { ip, headers: { accept: "application/activity+json" } }), 300);
    // Without a cursor the request only meets the general budget.
    expect((await call("GET", "/api/v1/timelines/public", { ip })).status).toBe(200);
    // Signed in, paging counts per account.
    await fill(`acct:${u.id}`, { paging: 300 }, 900);
    expectThrottled(await call("GET", "/api/v1/timelines/home?since_id=1", { token: u.token }), 300);
  });

  it("not counted: streaming, CORS preflights, pages outside /api, and the localhost safelist", async () => {
    const ip = "198.51.100.30";
    const health = await call("GET", "/api/v1/streaming/health", { ip });
    expect(health.status).toBe(200);
    expect(health.headers.get("x-ratelimit-limit")).toBeNull();
    const pre = await call("OPTIONS", "/api/v1/statuses", {
      ip,
      headers: { origin: "https://elk.example", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect((await call("GET", "/.well-known/nodeinfo", { ip })).headers.get("x-ratelimit-limit")).toBeNull();
    expect(await readCounters(`ip:${ip}`)).toEqual({});
    const local = await call("GET", "/api/v1/instance", { ip: "127.0.0.1" });
    expect(local.status).toBe(200);
    expect(local.headers.get("x-ratelimit-limit")).toBeNull();
    // RATE_LIMIT_SAFELIST=none counts localhost too.
    const counted = await call("GET", "/api/v1/instance", { ip: "127.0.0.1", vars: { RATE_LIMIT_SAFELIST: "none" } });
    expect(counted.headers.get("x-ratelimit-remaining")).toBe("299");
  });
});
