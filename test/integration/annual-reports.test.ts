// Annual reports (Wrapstodon, Mastodon 4.3's endpoints with 4.6's state and generate): when a report may be asked for,
// its generation in bounded background rounds, what it holds (archetype, top hashtags, the most boosted, favourited
// and replied-to posts, posts / follows / new followers per month, percentiles among local accounts), and what a
// failing D1 does to it. The clock is set with vi.setSystemTime: statuses get ids of the moment they are posted.
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runScheduled } from "../../src/background/cron";
import { currentCampaign, STALLED_AFTER_MS } from "../../src/services/accounts/annual-report";
import { ROUND_STATUSES } from "../../src/services/accounts/annual-report-rounds";
import { snowflake } from "../../src/lib/text/ids";
import { anon, makeUser, type TestUser } from "./helpers";
import { installQueueCapture, queued, runQueuedJobs, unpack } from "./queues";

const MARCH = Date.UTC(2026, 2, 5, 12);
const NOVEMBER = Date.UTC(2026, 10, 28, 12);
const DECEMBER = Date.UTC(2026, 11, 12, 12);

beforeEach(() => installQueueCapture());
afterEach(() => vi.useRealTimers());

const at = (ms: number) => vi.setSystemTime(ms);

async function post(u: TestUser, status: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await u.api.post("/api/v1/statuses", { status, ...extra });
  expect(r.status).toBe(200);
  return r.body.id;
}

const reportJobs = () => queued.jobs.flatMap(unpack).filter((e) => e.type === "annual_report");
const row = async (accountId: string) =>
  env.DB.prepare("SELECT state, cursor, data, viewed_at FROM annual_reports WHERE account_id = ? AND year = 2026")
    .bind(accountId.padStart(20, "0"))
    .first<{ state: string; cursor: string | null; data: string | null; viewed_at: number | null }>();

describe("annual reports", () => {
  it("walks ineligible → eligible → generating → available, and holds what Mastodon's report holds", async () => {
    at(MARCH);
    const a = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    expect((await c.api.post(`/api/v1/accounts/${a.id}/follow`)).status).toBe(200);
    expect((await a.api.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(200);
    const boosted = await post(a, "spring #Birds and #tern", { visibility: "public" });
    await post(a, "a question #birds #tern", { poll: { options: ["yes", "no"], expires_in: 3600 } });
    const bPost = await post(b, "b's post");
    await post(a, "a reply to b", { in_reply_to_id: bPost });
    await post(a, "a private thought #tern", { visibility: "private" });
    expect((await c.api.post(`/api/v1/statuses/${boosted}/reblog`)).status).toBe(200);
    expect((await b.api.post(`/api/v1/statuses/${boosted}/reblog`)).status).toBe(200);

    at(DECEMBER);
    const favourited = await post(a, "december", { visibility: "unlisted" });
    expect((await b.api.post(`/api/v1/statuses/${favourited}/favourite`)).status).toBe(200);
    const replied = await post(a, "tell me");
    await post(c, "telling you", { in_reply_to_id: replied });
    await post(b, "b again");
    expect((await b.api.post(`/api/v1/accounts/${a.id}/follow`)).status).toBe(200);
    await runQueuedJobs();

    // Before the campaign (10–31 December): ineligible, and generate does nothing.
    at(NOVEMBER);
    expect((await a.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "ineligible" });
    installQueueCapture();
    const early = await a.api.post("/api/v1/annual_reports/2026/generate");
    expect(early.status).toBe(200);
    expect(reportJobs()).toEqual([]);
    expect(await row(a.id)).toBeNull();

    at(DECEMBER);
    expect((await a.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "eligible" });
    expect((await a.api.get("/api/v1/annual_reports/2025/state")).body).toEqual({ state: "ineligible" });
    expect((await a.api.get("/api/v1/annual_reports/2026")).status).toBe(404);
    expect((await a.api.get("/api/v1/annual_reports")).body).toEqual({ annual_reports: [], accounts: [], statuses: [] });

    const gen = await a.api.post("/api/v1/annual_reports/2026/generate");
    expect(gen.status).toBe(202);
    expect(gen.headers.get("mastodon-async-refresh")).toBe('id="wrapstodon-2026", retry=2');
    const state = await a.api.get("/api/v1/annual_reports/2026/state");
    expect(state.body).toEqual({ state: "generating" });
    expect(state.headers.get("mastodon-async-refresh")).toBe('id="wrapstodon-2026", retry=2');
    expect((await a.api.get("/api/v1_alpha/async_refreshes/wrapstodon-2026")).body).toEqual({
      async_refresh: { id: "wrapstodon-2026", status: "running", result_count: null },
    });
    // Asking again while it runs starts nothing more.
    expect((await a.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    expect(reportJobs()).toHaveLength(1);
    expect((await a.api.get("/api/v1/annual_reports/2026")).status).toBe(404);

    await runQueuedJobs();
    expect((await a.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "available" });
    expect((await a.api.get("/api/v1_alpha/async_refreshes/wrapstodon-2026")).body.async_refresh.status).toBe("finished");
    expect((await a.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(200);

    const list = await a.api.get("/api/v1/annual_reports");
    expect(list.status).toBe(200);
    const [report] = list.body.annual_reports;
    expect(report).toMatchObject({ year: 2026, schema_version: 2, account_id: a.id, share_url: null });
    const d = report.data;
    // 6 posts of a's own, none a boost; one reply to someone else: under Mastodon's 113 a year, a lurker.
    expect(d.archetype).toBe("lurker");
    expect(d.type_distribution).toEqual({ total: 6, reblogs: 0, replies: 1, standalone: 5 });
    expect(d.top_statuses).toEqual({ by_reblogs: boosted, by_favourites: favourited, by_replies: replied });
    // Tags used more than once, by their display name, most used first; the private post counts (Mastodon's does).
    expect(d.top_hashtags).toEqual([
      { name: "tern", count: 3 },
      { name: "Birds", count: 2 },
    ]);
    expect(d.time_series).toHaveLength(12);
    expect(d.time_series[2]).toEqual({ month: 3, statuses: 4, following: 1, followers: 1 });
    expect(d.time_series[11]).toEqual({ month: 12, statuses: 2, following: 0, followers: 1 });
    expect(d.time_series[5]).toEqual({ month: 6, statuses: 0, following: 0, followers: 0 });
    // Among the local accounts with posts this year (a 6, b 3, c 1), two have fewer than a: 2 / (3 + 1).
    expect(d.percentiles.statuses).toBe(50);
    // New followers this year: a 2, b 1: one has fewer, 1 / (2 + 1).
    expect(d.percentiles.followers).toBeCloseTo(100 / 3);
    expect(list.body.accounts.map((x: any) => x.id)).toEqual([a.id]);
    expect(list.body.statuses.map((x: any) => x.id).sort()).toEqual([boosted, favourited, replied].sort());

    // Marked read: gone from the index, still served by year; someone else's year is theirs alone.
    expect((await a.api.post("/api/v1/annual_reports/2026/read")).body).toEqual({});
    expect((await row(a.id))?.viewed_at).toBeTypeOf("number");
    expect((await a.api.get("/api/v1/annual_reports")).body.annual_reports).toEqual([]);
    expect((await a.api.get("/api/v1/annual_reports/2026")).body.annual_reports[0].data).toEqual(d);
    expect((await b.api.get("/api/v1/annual_reports/2026")).status).toBe(404);
    expect((await b.api.post("/api/v1/annual_reports/2026/read")).status).toBe(404);
  });

  it("is offered only to an account with a public or unlisted post of the year, only while WRAPSTODON is on", async () => {
    at(DECEMBER);
    const u = await makeUser();
    await post(u, "only followers", { visibility: "private" });
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "ineligible" });
    await post(u, "hello world");
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "eligible" });
    expect(currentCampaign({ wrapstodon: false }, DECEMBER)).toBeNull();
    expect(currentCampaign({ wrapstodon: true }, Date.UTC(2026, 11, 9, 23, 59))).toBeNull();
    expect(currentCampaign({ wrapstodon: true }, Date.UTC(2026, 11, 10))).toBe(2026);
    expect(currentCampaign({ wrapstodon: true }, Date.UTC(2026, 11, 31, 23, 59))).toBe(2026);
    expect(currentCampaign({ wrapstodon: true }, Date.UTC(2027, 0, 1))).toBeNull();
  });

  it("reads a long year in rounds of bounded size, and a round run twice counts once", async () => {
    at(DECEMBER);
    const u = await makeUser();
    const n = ROUND_STATUSES * 2 + 37;
    const pad = (s: string) => s.padStart(20, "0");
    const stmts = [];
    /** A public status of u's written at `t`, its id made from `t`. */
    const statusAt = (t: number) => {
      const id = snowflake(t);
      return env.DB.prepare("INSERT INTO statuses (id, uri, account_id, local, visibility, created_at, updated_at) VALUES (?, ?, ?, 1, 'public', ?, ?)").bind(
        pad(id),
        `https://tern.test/statuses/${id}`,
        pad(u.id),
        t,
        t,
      );
    };
    for (let i = 0; i < n; i++) {
      stmts.push(statusAt(Date.UTC(2026, i % 12, 3, 10, 0, 0, i)));
    }
    // One of last year and one of next year, which the report must not count.
    for (const t of [Date.UTC(2025, 11, 31, 23, 59), Date.UTC(2027, 0, 1)]) stmts.push(statusAt(t));
    await env.DB.batch(stmts);
    expect((await u.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    const [first] = reportJobs();
    // The first round's message delivered twice (a queue redelivery): the second finds the cursor moved.
    queued.jobs.push(first!);
    let rounds = 0;
    while (queued.jobs.length) {
      rounds += reportJobs().length ? 1 : 0;
      await runQueuedJobs(1);
    }
    // 3 rounds of statuses, 1 of follows, 1 of percentiles, plus the duplicate.
    expect(rounds).toBe(6);
    const data = JSON.parse((await row(u.id))!.data!);
    expect(data.time_series.reduce((s: number, m: any) => s + m.statuses, 0)).toBe(n);
    expect(data.type_distribution.total).toBe(n);
    expect(data.time_series[0].statuses).toBe(Math.ceil(n / 12));
    expect(data.archetype).toBe("oracle");
  });

  it("a D1 that refuses a round's statement: the runner retries it a bounded number of times, nothing is counted twice, and generate starts a stalled report again", async () => {
    at(DECEMBER);
    const u = await makeUser();
    await post(u, "one #x");
    await post(u, "two #x");
    await runQueuedJobs();
    expect((await u.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    await env.DB.prepare("ALTER TABLE status_tags RENAME TO status_tags_away").run();
    try {
      let runs = 0;
      const seen: string[] = [];
      while (queued.jobs.length && runs < 50) {
        seen.push(JSON.stringify(queued.jobs[0]));
        runs += await runQueuedJobs(1);
      }
      expect(seen.every((m) => m.includes('"type":"annual_report"'))).toBe(true);
      // The runner's own retries (src/effects/retry.ts): 10 attempts, then a dead letter; no endless loop.
      expect(runs).toBe(10);
      const dead = await env.DB.prepare("SELECT body, attempts FROM dead_letters WHERE queue = 'tern-jobs'").all<{ body: string; attempts: number }>();
      expect(dead.results.map((r) => JSON.parse(r.body).effects?.[0]?.type ?? JSON.parse(r.body).type)).toContain("annual_report");
    } finally {
      await env.DB.prepare("ALTER TABLE status_tags_away RENAME TO status_tags").run();
    }
    expect((await row(u.id))?.state).toBe("generating");
    expect((await row(u.id))?.cursor).toBeNull();
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "generating" });
    // Asked again before it counts as stalled: nothing new. After: it starts from the beginning and completes.
    expect((await u.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    expect(reportJobs()).toEqual([]);
    at(DECEMBER + STALLED_AFTER_MS + 1_000);
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "eligible" });
    expect((await u.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    await runQueuedJobs();
    const data = JSON.parse((await row(u.id))!.data!);
    expect(data.top_hashtags).toEqual([{ name: "x", count: 2 }]);
    expect(data.type_distribution.total).toBe(2);
  });

  it("a queue that refuses the generation's effect: 202 all the same, the effect kept in D1 and sent by the cron once", async () => {
    at(DECEMBER);
    const u = await makeUser();
    await post(u, "hello");
    await runQueuedJobs();
    const fail = () => Promise.reject(new Error("Queue send failed: 503 Service Unavailable"));
    vi.spyOn(env.JOBS, "send").mockImplementation(fail);
    vi.spyOn(env.JOBS, "sendBatch").mockImplementation(fail);
    expect((await u.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(202);
    const kept = async () => (await env.DB.prepare("SELECT count(*) AS n FROM pending_effects").first<{ n: number }>())!.n;
    expect(await kept()).toBe(1);
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "generating" });
    // The queue is back: the cron sends it, the rounds run, and nothing is left to send twice.
    installQueueCapture();
    await runScheduled(env, Date.now(), { housekeeping: false, hourly: false });
    expect(await kept()).toBe(0);
    expect(reportJobs()).toHaveLength(1);
    await runQueuedJobs();
    expect((await u.api.get("/api/v1/annual_reports/2026/state")).body).toEqual({ state: "available" });
    expect(JSON.parse((await row(u.id))!.data!).type_distribution.total).toBe(1);
  });

  it("answers bad input and missing scopes with Mastodon's errors", async () => {
    at(DECEMBER);
    const u = await makeUser();
    for (const path of ["/api/v1/annual_reports/abc", "/api/v1/annual_reports/20261", "/api/v1/annual_reports/-1/state"]) {
      expect((await u.api.get(path)).status).toBe(404);
    }
    expect((await u.api.post("/api/v1/annual_reports/2026/read")).status).toBe(404);
    expect((await u.api.get("/api/v1_alpha/async_refreshes/something-else")).status).toBe(404);
    expect((await anon.get("/api/v1/annual_reports")).status).toBe(401);
    expect((await anon.post("/api/v1/annual_reports/2026/generate")).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.post("/api/v1/annual_reports/2026/generate")).status).toBe(403);
    const writeOnly = await makeUser(undefined, { scopes: "write" });
    expect((await writeOnly.api.get("/api/v1/annual_reports/2026/state")).status).toBe(403);
    expect(await row(readOnly.id)).toBeNull();
  });
});
