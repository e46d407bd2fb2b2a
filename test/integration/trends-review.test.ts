// Mastodon's "Allow trends without prior review" (trendable_by_default, off by default): with it off, a trending tag is
// held back from the public trends until staff approve it, and every 2 hours staff who may manage trends and want it
// are mailed what newly awaits review (src/trends/review-notice.ts), read here from what miniflare captured. With it on
// (the admin settings page), trends show at once and no notice is sent.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { hourlyTasks, runScheduled } from "../../src/background/cron";
import type { Env } from "../../src/env";
import { Effects } from "../../src/effects/collector";
import { snowflake } from "../../src/lib/text/ids";
import { refreshTrends, TAG_TRENDS } from "../../src/trends/refresh";
import { isTrendsNoticeHour, noticeTrendsAwaitingReview } from "../../src/trends/review-notice";
import { countingD1, type D1Count } from "../../src/lib/limits/d1-counter";
import { createDb } from "../../src/db/client";
import { ADMIN } from "./admin-fixtures";
import { ORIGIN, anon, db, makeUser } from "./helpers";
import { failingBinding, mailTo } from "./mail-helpers";
import { installQueueCapture, queued, runQueuedJobs, unpack } from "./queues";
import { csrfOf, postForm, signedIn } from "./settings-helpers";
import { tagStatements } from "./trends-fixtures";

beforeEach(() => installQueueCapture());

const pad = (id: string) => id.padStart(20, "0");
let n = 0;

/** A tag used today by enough remote accounts to trend. */
async function trendingTag(name: string) {
  const stmts: D1PreparedStatement[] = [];
  for (let i = 0; i < TAG_TRENDS.threshold; i++) {
    const a = snowflake();
    const s = snowflake(Date.now() - 60_000 + (n++ % 50));
    stmts.push(
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, discoverable, created_at, updated_at) VALUES (?1, ?2, 'remote.example', ?3, 1, 1, 1)",
      ).bind(pad(a), `r${a}`, `https://remote.example/users/r${a}`),
      env.DB.prepare(
        `INSERT INTO statuses (id, uri, account_id, local, content, visibility, language, created_at, updated_at)
         VALUES (?1, ?2, ?3, 0, '<p>x</p>', 'public', 'en', ?4, ?4)`,
      ).bind(pad(s), `https://remote.example/s/${s}`, pad(a), Date.now() - 60_000),
      ...tagStatements(s, name),
    );
  }
  await env.DB.batch(stmts);
}

const publicTags = async () => (await anon.get("/api/v1/trends/tags")).body.map((t: { name: string }) => t.name);

describe("trends need review by default (trendable_by_default off)", () => {
  it("a trending tag stays out of the public trends until approved; staff are mailed once per new item, every 2 hours", async () => {
    const admin = await makeUser(`trendrev${Date.now().toString(36)}`, ADMIN);
    const optedOut = await makeUser(`trendoff${Date.now().toString(36)}`, ADMIN);
    await env.DB.prepare(`UPDATE users SET settings = json_set(settings, '$."notification_emails:trends"', json('false')) WHERE id = ?`)
      .bind(pad(optedOut.userId))
      .run();
    await trendingTag("needsreview");
    await refreshTrends(db(), Date.now());
    expect(await publicTags()).toEqual([]);
    const listed = await admin.api.get("/api/v1/admin/trends/tags");
    expect(listed.body.map((t: { name: string }) => t.name)).toContain("needsreview");

    // The cron's hourly run on an even hour records the notice; on an odd hour it does not run.
    const even = Date.UTC(2026, 10, 28, 10, 2);
    expect(isTrendsNoticeHour(even)).toBe(true);
    expect(isTrendsNoticeHour(even + 3_600_000)).toBe(false);
    expect(hourlyTasks(env, db(), even + 3_600_000, new Effects(ORIGIN)).map(([name]) => name)).not.toContain("notice of trends awaiting review");
    const since = Date.now() - 1;
    const fx = new Effects(ORIGIN);
    for (const [, task] of hourlyTasks(env, db(), even, fx)) await task();
    // Recorded for the cron's own invocation (run there once its tasks are done), not for the queue.
    expect(fx.list).toEqual([]);
    const here = fx.drainHere();
    expect(here).toEqual([expect.objectContaining({ type: "mail_staff", notice: { kind: "trends", tags: 1, statuses: 0, links: 0 } })]);
    await env.JOBS.send({ type: "effects", origin: ORIGIN, effects: here });
    await runQueuedJobs();
    const mails = await mailTo(`${admin.username}@example.com`, since);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain("1 hashtag");
    expect(mails[0]!.text).toContain(`${ORIGIN}/admin`);
    expect(await mailTo(`${optedOut.username}@example.com`, since)).toHaveLength(0);

    // Nothing new two hours later: no second notice, and no row written.
    const again = new Effects(ORIGIN);
    const counter: D1Count = { n: 0 };
    expect(await noticeTrendsAwaitingReview(createDb(countingD1(env.DB, counter, { rows: true })), again)).toBe(0);
    expect(again.drainHere()).toHaveLength(0);
    expect(counter.w).toBe(0);

    // Approved, it trends.
    const tag = listed.body.find((t: { name: string }) => t.name === "needsreview");
    expect((await admin.api.post(`/api/v1/admin/trends/tags/${tag.id}/approve`)).status).toBe(200);
    expect(await publicTags()).toContain("needsreview");
    await refreshTrends(db(), Date.now() + 60_000);
    expect(await publicTags()).toContain("needsreview");
  });

  it("the admin settings page turns review off: trends show at once and no notice is made", async () => {
    const admin = await makeUser(`trendset${Date.now().toString(36)}`, ADMIN);
    const jar = await signedIn(admin.username);
    const page = await postForm(jar, "/admin/settings", { form: "settings", trendable_by_default: "1" }, await csrfOf(jar, "/admin/settings"));
    expect(page.status).toBe(303);
    expect(await env.DB.prepare("SELECT value FROM instance_settings WHERE key = 'trendable_by_default'").first("value")).toBe("1");
    await trendingTag("noreview");
    await refreshTrends(db(), Date.now());
    expect(await publicTags()).toContain("noreview");
    const fx = new Effects(ORIGIN);
    expect(await noticeTrendsAwaitingReview(db(), fx)).toBe(0);
    expect(fx.list).toHaveLength(0);
    expect(fx.drainHere()).toHaveLength(0);
  });
});

describe("the cron mails the notice itself", () => {
  it("in its own invocation: the mail arrives and no queue message is sent", async () => {
    const admin = await makeUser(`trendcron${Date.now().toString(36)}`, ADMIN);
    await trendingTag("cronmailed");
    await refreshTrends(db(), Date.now());
    queued.jobs.length = 0;
    await runScheduled({ ...env, EFFECTS_AFTER_RESPONSE: "" } as Env, Date.UTC(2026, 10, 28, 12, 2), { housekeeping: false, hourly: true });
    expect(queued.jobs).toEqual([]);
    // Every mail ever sent to this test's own address (a file's mtime is the kernel's coarse clock, a few ms behind
    // Date.now(): a `since` taken just before the send could leave the mail out).
    const mails = await mailTo(`${admin.username}@example.com`);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain("1 hashtag");
  });

  for (const how of ["throw", "reject", "hang"] as const) {
    it(`with a mail binding that ${how === "hang" ? "never answers" : `${how}s`}: the cron ends, and the notice waits in the queue for its next attempt`, async () => {
      const admin = await makeUser(`trendfail${how}${Date.now().toString(36)}`, ADMIN);
      await trendingTag(`cronfail${how}`);
      await refreshTrends(db(), Date.now());
      queued.jobs.length = 0;
      const { binding, calls } = failingBinding(how);
      await runScheduled({ ...env, EFFECTS_AFTER_RESPONSE: "", EMAIL: binding, MAIL_TIMEOUT_MS: "50" } as Env, Date.UTC(2026, 10, 28, 14, 2), {
        housekeeping: false,
        hourly: true,
      });
      // The notice became the admin's mail and its first attempt ran in the cron's invocation; the next is the queue's.
      expect(calls.n).toBe(1);
      const retried = queued.jobs.flatMap(unpack).filter((e) => e.type === "mail");
      expect(retried).toEqual([expect.objectContaining({ mail: expect.objectContaining({ kind: "admin_trends", userId: admin.userId, tags: 1 }) })]);
      // The failing binding wrote nothing: every mail to this test's own address is the queue's attempt (no `since`:
      // a file's mtime is the kernel's coarse clock, a few ms behind Date.now(), and this send follows at once).
      await runQueuedJobs();
      expect(await mailTo(`${admin.username}@example.com`)).toHaveLength(1);
    });
  }
});
