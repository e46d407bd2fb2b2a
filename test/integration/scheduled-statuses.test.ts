// Scheduled statuses: POST /api/v1/statuses with scheduled_at (5-minute rule, bad dates, the entity, media reserved
// and freed, polls, limits), /api/v1/scheduled_statuses (list/show/reschedule/delete, ownership, scopes), and
// publication by the cron through postStatus: claims, the JOBS effect run by the consumer's code, exactly once,
// transient and permanent failures.
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CLAIM_TTL_MS, DAILY_LIMIT, MAX_CLAIMS, TOTAL_LIMIT } from "../../src/services/statuses/scheduled-statuses";
import { publishScheduledStatus } from "../../src/services/statuses/publish-scheduled";
import { runCronTrigger, runScheduled } from "../../src/background/cron";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import { runJob } from "../../src/background/effects-runner";
import type { UserViewer } from "../../src/oauth/guard";
import { loadViewer } from "../../src/oauth/viewer";
import { postStatus } from "../../src/services/statuses/post-status";
import { ORIGIN, anon, cfg, links, makeUser, type TestUser } from "./helpers";
import { png } from "./media-fixtures";
import { queued, runQueuedJobs } from "./queues";
import { count, follow, pad } from "./statuses-fixtures";

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** A time `minutes` ahead, on a whole second (what the entity echoes back). */
const ahead = (minutes: number) => Math.ceil((Date.now() + minutes * MIN) / 1000) * 1000;

async function schedule(u: TestUser, body: Record<string, unknown>, at = ahead(10)) {
  const res = await u.api.post("/api/v1/statuses", { scheduled_at: iso(at), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function upload(u: TestUser): Promise<string> {
  const f = new FormData();
  f.append("file", new File([await png(4, 4)], "a.png", { type: "image/png" }));
  const res = await u.api.post("/api/v2/media", f, "multipart");
  expect(res.status).toBe(200);
  return res.body.id;
}

const statusesOf = (u: TestUser) => count("SELECT count(*) AS n FROM statuses WHERE account_id = ?1", pad(u.id));
const publishEffects = () => queued.jobs.filter((j) => j.type === "publish_scheduled");
const row = (id: string) =>
  env.DB.prepare("SELECT scheduled_at, claimed_at, claims, failed_at, error FROM scheduled_statuses WHERE id = ?1")
    .bind(pad(id))
    .first<{ scheduled_at: number; claimed_at: number | null; claims: number; failed_at: number | null; error: string | null }>();
const mediaRow = (id: string) =>
  env.DB.prepare("SELECT status_id, scheduled_status_id FROM media_attachments WHERE id = ?1")
    .bind(pad(id))
    .first<{ status_id: string | null; scheduled_status_id: string | null }>();

let fillerIds = 1000;

/** Inserts `n` scheduled statuses for `u` directly, `stepMs` apart from `from` (small ids: older than any real one). */
async function insertScheduled(u: TestUser, n: number, from: number, stepMs: number) {
  const first = fillerIds;
  fillerIds += n;
  await env.DB.prepare(
    `INSERT INTO scheduled_statuses (id, account_id, scheduled_at, params, created_at)
     SELECT printf('%020d', ?1 + value), ?2, ?3 + value * ?4, '{"text":"filler"}', 0 FROM json_each(?5)`,
  )
    .bind(first, pad(u.id), from, stepMs, JSON.stringify([...Array(n).keys()]))
    .run();
}

describe("POST /api/v1/statuses with scheduled_at", { timeout: 60000 }, () => {
  it("refuses bad dates and times less than 5 minutes ahead, with Mastodon's messages, and posts nothing", async () => {
    const u = await makeUser();
    for (const bad of ["2024-13-45", "tomorrow", "12/24/2030"]) {
      const res = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: bad });
      expect(res.status, bad).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: Scheduled at Invalid date supplied" });
    }
    for (const when of [Date.now() - 3600_000, Date.now() + 60_000, Date.now() + 4 * MIN + 50_000]) {
      const res = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: iso(when) });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation failed: Scheduled at The scheduled date must be in the future" });
    }
    // The post's own rules apply at scheduling time too.
    expect((await u.api.post("/api/v1/statuses", { status: "", scheduled_at: iso(ahead(10)) })).body.error).toBe("Validation failed: Text can't be blank");
    expect(await statusesOf(u)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM scheduled_statuses")).toBe(0);
    expect(queued.jobs.filter((j) => j.type === "fanout" || j.type === "federate")).toEqual([]);
  });

  it("answers 200 with the ScheduledStatus entity, the same from show and list; nothing is posted", async () => {
    const u = await makeUser();
    const at = ahead(30);
    const s = await schedule(u, { status: "Hello later" }, at);
    expect(s).toEqual({
      id: expect.stringMatching(/^\d+$/),
      scheduled_at: iso(at),
      params: {
        text: "Hello later",
        media_ids: null,
        sensitive: null,
        spoiler_text: null,
        visibility: null,
        language: null,
        scheduled_at: null,
        poll: null,
        idempotency: null,
        with_rate_limit: false,
        in_reply_to_id: null,
        quoted_status_id: null,
        quote_approval_policy: "public",
      },
      media_attachments: [],
    });
    expect((await u.api.get(`/api/v1/scheduled_statuses/${s.id}`)).body).toEqual(s);
    expect((await u.api.get("/api/v1/scheduled_statuses")).body).toEqual([s]);
    expect(await statusesOf(u)).toBe(0);
    expect(queued.jobs.filter((j) => j.type === "fanout" || j.type === "federate")).toEqual([]);
  });

  it("keeps the given options with their types (form-encoded too), the reply target's id as a string", async () => {
    const u = await makeUser();
    const parent = await u.api.post("/api/v1/statuses", { status: "first" });
    const res = await u.api.post(
      "/api/v1/statuses",
      {
        status: "a reply",
        in_reply_to_id: parent.body.id,
        sensitive: "true",
        spoiler_text: "cw",
        visibility: "unlisted",
        language: "en",
        scheduled_at: iso(ahead(20)),
      },
      "form",
    );
    expect(res.status).toBe(200);
    expect(res.body.params).toMatchObject({
      text: "a reply",
      in_reply_to_id: parent.body.id,
      sensitive: true,
      spoiler_text: "cw",
      visibility: "unlisted",
      language: "en",
    });
    // A reply to what the poster may not see is refused now, not at publication.
    const other = await makeUser();
    const priv = await other.api.post("/api/v1/statuses", { status: "followers only", visibility: "private" });
    expect((await u.api.post("/api/v1/statuses", { status: "x", in_reply_to_id: priv.body.id, scheduled_at: iso(ahead(20)) })).status).toBe(404);
  });

  it("returns the same scheduled status for a repeated Idempotency-Key", async () => {
    const u = await makeUser();
    const send = () => fetchJson(u, "/api/v1/statuses", { status: "once", scheduled_at: iso(ahead(15)) }, { "idempotency-key": "sched-1" });
    const first = await send();
    const second = await send();
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(await count("SELECT count(*) AS n FROM scheduled_statuses WHERE account_id = ?1", pad(u.id))).toBe(1);
  });

  it("reserves its media: shown on the entity, not attachable elsewhere nor deletable; freed when it is deleted", async () => {
    const u = await makeUser();
    const m1 = await upload(u);
    const m2 = await upload(u);
    const s = await schedule(u, { status: "with pictures", media_ids: [m2, m1] });
    expect(s.params.media_ids).toEqual([m2, m1]);
    expect(s.media_attachments.map((m: any) => m.id)).toEqual([m2, m1]);
    expect(s.media_attachments[0]).toMatchObject({ type: "image", url: expect.stringContaining(`/media_attachments/${m2}/`) });
    expect((await mediaRow(m1))?.scheduled_status_id).toBe(pad(s.id));

    const direct = await u.api.post("/api/v1/statuses", { status: "steal", media_ids: [m1] });
    expect(direct.status).toBe(422);
    expect(direct.body.error).toBe(`Validation failed: Media attachment not found: ${m1}`);
    expect((await u.api.post("/api/v1/statuses", { status: "again", media_ids: [m1], scheduled_at: iso(ahead(10)) })).status).toBe(422);
    expect((await u.api.delete(`/api/v1/media/${m1}`)).status).toBe(422);
    // The list renders the media of every row of the page (one batch for the page).
    const m3 = await upload(u);
    const s2 = await schedule(u, { status: "another", media_ids: [m3] });
    const listed = (await u.api.get("/api/v1/scheduled_statuses")).body;
    expect(listed.map((x: any) => [x.id, x.media_attachments.map((m: any) => m.id)])).toEqual([
      [s2.id, [m3]],
      [s.id, [m2, m1]],
    ]);
    // Someone else's media cannot be scheduled.
    const other = await makeUser();
    const theirs = await upload(other);
    expect((await u.api.post("/api/v1/statuses", { status: "x", media_ids: [theirs], scheduled_at: iso(ahead(10)) })).status).toBe(422);

    const del = await u.api.delete(`/api/v1/scheduled_statuses/${s.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect(await mediaRow(m1)).toEqual({ status_id: null, scheduled_status_id: null });
    const post = await u.api.post("/api/v1/statuses", { status: "now", media_ids: [m1] });
    expect(post.status).toBe(200);
    expect((await u.api.delete(`/api/v1/media/${m2}`)).status).toBe(200);
  });

  it("schedules a poll (validated now), never with media", async () => {
    const u = await makeUser();
    const s = await schedule(u, { status: "Which?", poll: { options: ["tea", "coffee"], expires_in: 3600, multiple: true } });
    expect(s.params.poll).toEqual({ options: ["tea", "coffee"], expires_in: 3600, multiple: true, hide_totals: false });
    const bad = await u.api.post("/api/v1/statuses", { status: "x", poll: { options: ["only"], expires_in: 3600 }, scheduled_at: iso(ahead(10)) });
    expect(bad.status).toBe(422);
    const m = await upload(u);
    const both = await u.api.post("/api/v1/statuses", {
      status: "x",
      media_ids: [m],
      poll: { options: ["a", "b"], expires_in: 3600 },
      scheduled_at: iso(ahead(10)),
    });
    expect(both.status).toBe(422);
    expect(await count("SELECT count(*) AS n FROM polls")).toBe(0);
  });

  it("enforces 300 pending per account and 25 per day, with Mastodon's messages", async () => {
    const u = await makeUser();
    const day = Date.UTC(2031, 0, 10);
    await insertScheduled(u, DAILY_LIMIT, day + 3600_000, 60_000); // 25 on 2031-01-10 (UTC)
    const full = await u.api.post("/api/v1/statuses", { status: "x", scheduled_at: iso(day + 23 * 3600_000) });
    expect(full.status).toBe(422);
    expect(full.body).toEqual({ error: `Validation failed: You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today` });
    // The next day is free; moving it onto the full day is not.
    const next = await schedule(u, { status: "next day" }, day + 86_400_000 + 60_000);
    const moved = await u.api.put(`/api/v1/scheduled_statuses/${next.id}`, { scheduled_at: iso(day + 7200_000) });
    expect(moved.status).toBe(422);
    expect(moved.body.error).toBe(`Validation failed: You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`);

    const v = await makeUser();
    await insertScheduled(v, TOTAL_LIMIT, Date.UTC(2032, 0, 1), 3600_000); // 24 a day
    const over = await v.api.post("/api/v1/statuses", { status: "x", scheduled_at: iso(Date.UTC(2035, 0, 1)) });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ error: `Validation failed: You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts` });
    // Deleting one makes room.
    const page = await v.api.get("/api/v1/scheduled_statuses?limit=1");
    expect((await v.api.delete(`/api/v1/scheduled_statuses/${page.body[0].id}`)).status).toBe(200);
    expect((await v.api.post("/api/v1/statuses", { status: "x", scheduled_at: iso(Date.UTC(2035, 0, 1)) })).status).toBe(200);
  });
});

async function fetchJson(u: TestUser, path: string, body: unknown, headers: Record<string, string>) {
  const res = await SELF.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("/api/v1/scheduled_statuses", { timeout: 60000 }, () => {
  it("lists newest first with Link paging and max_id/since_id/min_id/limit", async () => {
    const u = await makeUser();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await schedule(u, { status: `n${i}` }, ahead(10 + i))).id);
    const desc = [...ids].reverse();
    const all = await u.api.get("/api/v1/scheduled_statuses");
    expect(all.body.map((s: any) => s.id)).toEqual(desc);

    const p1 = await u.api.get("/api/v1/scheduled_statuses?limit=2");
    expect(p1.body.map((s: any) => s.id)).toEqual(desc.slice(0, 2));
    const l = links(p1.headers);
    expect(l.next).toBe(`/api/v1/scheduled_statuses?limit=2&max_id=${desc[1]}`);
    expect(l.prev).toBe(`/api/v1/scheduled_statuses?limit=2&min_id=${desc[0]}`);
    const p2 = await u.api.get(l.next!);
    expect(p2.body.map((s: any) => s.id)).toEqual(desc.slice(2, 4));
    const p3 = await u.api.get(links(p2.headers).next!);
    expect(p3.body.map((s: any) => s.id)).toEqual(desc.slice(4));
    expect(links(p3.headers).next).toBeUndefined();

    expect((await u.api.get(`/api/v1/scheduled_statuses?min_id=${ids[1]}&limit=2`)).body.map((s: any) => s.id)).toEqual([ids[3], ids[2]]);
    expect((await u.api.get(`/api/v1/scheduled_statuses?since_id=${ids[1]}&limit=2`)).body.map((s: any) => s.id)).toEqual([ids[4], ids[3]]);
    expect((await u.api.get("/api/v1/scheduled_statuses?limit=0")).body).toHaveLength(5); // limits clamp
    expect((await u.api.get("/api/v1/scheduled_statuses?limit=1000")).body).toHaveLength(5);
  });

  it("shows, reschedules and deletes only the owner's; another user gets 404", async () => {
    const [u, other] = await Promise.all([makeUser(), makeUser()]);
    const s = await schedule(u, { status: "mine" });
    for (const res of [
      await other.api.get(`/api/v1/scheduled_statuses/${s.id}`),
      await other.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(ahead(60)) }),
      await other.api.delete(`/api/v1/scheduled_statuses/${s.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    expect((await other.api.get("/api/v1/scheduled_statuses")).body).toEqual([]);
    for (const bad of ["abc", "-1", "99999999999999999999999"]) expect((await u.api.get(`/api/v1/scheduled_statuses/${bad}`)).status).toBe(404);

    const at = ahead(90);
    const put = await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(at) });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...s, scheduled_at: iso(at) });
    expect((await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, {})).body.scheduled_at).toBe(iso(at));
    const soon = await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(Date.now() + MIN) });
    expect(soon.status).toBe(422);
    expect(soon.body.error).toBe("Validation failed: Scheduled at The scheduled date must be in the future");
    expect((await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: "nope" })).status).toBe(422);

    expect((await u.api.delete(`/api/v1/scheduled_statuses/${s.id}`)).body).toEqual({});
    expect((await u.api.get(`/api/v1/scheduled_statuses/${s.id}`)).status).toBe(404);
    expect((await u.api.delete(`/api/v1/scheduled_statuses/${s.id}`)).status).toBe(404);
  });

  it("takes read:statuses to read and write:statuses to change", async () => {
    const u = await makeUser();
    const s = await schedule(u, { status: "scoped" });
    const reader = await makeUser(undefined, { scopes: "read:statuses" });
    const writer = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await anon.get("/api/v1/scheduled_statuses")).status).toBe(401);
    expect((await reader.api.get("/api/v1/scheduled_statuses")).status).toBe(200);
    expect((await writer.api.get("/api/v1/scheduled_statuses")).status).toBe(403);
    expect((await reader.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(ahead(60)) })).status).toBe(403);
    expect((await reader.api.delete(`/api/v1/scheduled_statuses/${s.id}`)).status).toBe(403);
    expect((await writer.api.delete(`/api/v1/scheduled_statuses/${s.id}`)).status).toBe(404); // not theirs
  });
});

describe("publishing by the cron", { timeout: 60000 }, () => {
  it("publishes a due status through postStatus: media move, poll, reply, app; fan-out follows; the row goes", async () => {
    const [u, fan] = await Promise.all([makeUser(), makeUser()]);
    await follow(fan.id, u.id);
    const parent = await u.api.post("/api/v1/statuses", { status: "thread start" });
    const m = await upload(u);
    const at = ahead(10);
    const a = await schedule(u, { status: "Scheduled #hello", media_ids: [m], in_reply_to_id: parent.body.id, visibility: "unlisted" }, at);
    const b = await schedule(u, { status: "Vote later", poll: { options: ["x", "y"], expires_in: 600 } }, at + MIN);
    const notYet = await schedule(u, { status: "much later" }, at + 3600_000);
    queued.jobs.length = 0;

    // Before its time: nothing.
    await runScheduled(env, at - 1000);
    expect(publishEffects()).toEqual([]);
    await runScheduled(env, at + MIN + 1000);
    expect(
      publishEffects()
        .map((e: any) => e.scheduledStatusId)
        .sort(),
    ).toEqual([a.id, b.id].sort());
    // An overlapping run takes nothing that is claimed.
    const before = queued.jobs.length;
    await runScheduled(env, at + MIN + 2000);
    expect(queued.jobs.slice(before).filter((j) => j.type === "publish_scheduled")).toEqual([]);

    await runQueuedJobs();
    const posted = await u.api.get(`/api/v1/accounts/${u.id}/statuses`);
    expect(posted.body).toHaveLength(3);
    const pa = posted.body.find((s: any) => s.content.includes("Scheduled"));
    const pb = posted.body.find((s: any) => s.content.includes("Vote later"));
    expect(pa).toMatchObject({ in_reply_to_id: parent.body.id, visibility: "unlisted", application: { name: "Test App" } });
    expect(pa.media_attachments.map((x: any) => x.id)).toEqual([m]);
    expect(pa.tags.map((t: any) => t.name)).toEqual(["hello"]);
    expect(await mediaRow(m)).toEqual({ status_id: pad(pa.id), scheduled_status_id: null });
    expect(pb.poll).toMatchObject({ options: [{ title: "x" }, { title: "y" }], multiple: false });
    expect(Date.parse(pb.poll.expires_at) - Date.parse(pb.created_at)).toBeGreaterThanOrEqual(599_000);

    // The post's own effects ran: the follower's home feed has both.
    const home = await fan.api.get("/api/v1/timelines/home");
    expect(home.body.map((s: any) => s.id).sort()).toEqual([pa.id, pb.id].sort());

    for (const id of [a.id, b.id]) expect((await u.api.get(`/api/v1/scheduled_statuses/${id}`)).status).toBe(404);
    expect((await u.api.get("/api/v1/scheduled_statuses")).body.map((s: any) => s.id)).toEqual([notYet.id]);
  });

  it("schedules a quote (Mastodon 4.5): checked when scheduled, published as a quote with its policy", async () => {
    const [u, other] = await Promise.all([makeUser(), makeUser()]);
    const theirs = (await other.api.post("/api/v1/statuses", { status: "quote me later" })).body;
    const at = ahead(10);
    const s = await schedule(u, { status: "my take", quoted_status_id: theirs.id, quote_approval_policy: "followers" }, at);
    expect(s.params).toMatchObject({ quoted_status_id: theirs.id, quote_approval_policy: "followers" });
    // One that cannot be quoted is refused now, and nothing is scheduled.
    const missing = await u.api.post("/api/v1/statuses", { scheduled_at: iso(at), status: "nope", quoted_status_id: "12345" });
    expect(missing.status).toBe(404);
    expect((await u.api.get("/api/v1/scheduled_statuses")).body.map((x: any) => x.id)).toEqual([s.id]);

    await runScheduled(env, at + 1000);
    await runQueuedJobs();
    const [posted] = (await u.api.get(`/api/v1/accounts/${u.id}/statuses`)).body;
    expect(posted.content).toContain("my take");
    expect(posted.quote).toMatchObject({ state: "accepted", quoted_status: { id: theirs.id } });
    expect(posted.quote_approval.automatic).toEqual(["followers"]);
    expect((await other.api.get("/api/v1/notifications")).body.map((n: any) => [n.type, n.status?.id])).toContainEqual(["quote", posted.id]);
  });

  it("runs every minute; the heavier tasks only on every 5th minute", async () => {
    const [u, muted] = await Promise.all([makeUser(), makeUser()]);
    const at = ahead(10);
    const s = await schedule(u, { status: "on the minute" }, at);
    const minute = Math.ceil((at + 1000) / MIN) * MIN;
    const odd = new Date(minute).getUTCMinutes() % 5 === 0 ? minute + MIN : minute;
    const fifth = Math.ceil(odd / (5 * MIN)) * 5 * MIN;
    await env.DB.prepare("INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at) VALUES (?1, ?2, ?3, 1, ?4, 0)")
      .bind(pad("12345"), pad(u.id), pad(muted.id), odd - 1)
      .run();
    queued.jobs.length = 0;
    await runCronTrigger(env, odd);
    expect(publishEffects()).toEqual([{ type: "publish_scheduled", scheduledStatusId: s.id }]);
    expect(await count("SELECT count(*) AS n FROM mutes")).toBe(1);
    await runCronTrigger(env, fifth);
    expect(await count("SELECT count(*) AS n FROM mutes")).toBe(0);
  });

  it("publishes once: a repeated effect, two at once, and an expired claim taken again", async () => {
    const u = await makeUser();
    const at = ahead(10);
    const s = await schedule(u, { status: "exactly once" }, at);
    queued.jobs.length = 0;
    await runScheduled(env, at);
    const [effect] = publishEffects();
    expect(effect).toEqual({ type: "publish_scheduled", scheduledStatusId: s.id });
    const db = createDb(env.DB);
    const fx1 = new Effects("http://tern.test");
    const fx2 = new Effects("http://tern.test");
    const outcomes = await Promise.all([publishScheduledStatus(db, env, fx1, s.id), publishScheduledStatus(db, env, fx2, s.id)]);
    expect(outcomes.sort()).toEqual(["published", "skipped"]);
    expect([...fx1.list, ...fx2.list].filter((e) => e.type === "fanout")).toHaveLength(1);
    // The queue delivering the same effect again changes nothing.
    await runJob(db, env, effect);
    await runJob(db, env, { type: "effects", origin: "http://tern.test", effects: [effect, effect] });
    expect(await statusesOf(u)).toBe(1);

    // A publication that died: its claim expires and a later run takes the row again.
    const t = await schedule(u, { status: "second chance" }, at + MIN);
    queued.jobs.length = 0;
    await runScheduled(env, at + MIN);
    expect(publishEffects()).toHaveLength(1);
    queued.jobs.length = 0; // lost
    await runScheduled(env, at + MIN + CLAIM_TTL_MS - 1000);
    expect(publishEffects()).toEqual([]);
    await runScheduled(env, at + MIN + CLAIM_TTL_MS);
    expect(publishEffects()).toEqual([{ type: "publish_scheduled", scheduledStatusId: t.id }]);
    expect((await row(t.id))?.claims).toBe(2);
    await runQueuedJobs();
    expect(await statusesOf(u)).toBe(2);
    expect(await row(t.id)).toBeNull();
  });

  it("the write batch commits only under the claim it was started with", async () => {
    const u = await makeUser();
    const at = ahead(10);
    const s = await schedule(u, { status: "guarded" }, at);
    await runScheduled(env, at);
    const db = createDb(env.DB);
    const viewer = (await loadViewer(db, u.token)) as UserViewer;
    const input = { status: "guarded" };
    const fx = new Effects(ORIGIN);
    // A publication that read an older claim (the row was taken again since, or rescheduled) writes nothing.
    await expect(postStatus(db, fx, cfg(), viewer, input, `scheduled:${s.id}`, { scheduled: { id: s.id, claimedAt: at - 1 } })).rejects.toThrow();
    expect(await statusesOf(u)).toBe(0);
    expect(await row(s.id)).toMatchObject({ claimed_at: at });
    const ok = await postStatus(db, fx, cfg(), viewer, input, `scheduled:${s.id}`, { scheduled: { id: s.id, claimedAt: at } });
    expect(ok.created).toBe(true);
    expect(await row(s.id)).toBeNull();
    // And once the row is gone, the same key answers the status already posted.
    const again = await postStatus(db, fx, cfg(), viewer, input, `scheduled:${s.id}`, { scheduled: { id: s.id, claimedAt: at } });
    expect(again).toMatchObject({ id: ok.id, created: false });
    expect(await statusesOf(u)).toBe(1);
  });

  it("a reschedule or delete after the claim wins over the publication under way", async () => {
    const u = await makeUser();
    const at = ahead(10);
    const s = await schedule(u, { status: "changed my mind" }, at);
    const d = await schedule(u, { status: "deleted" }, at);
    queued.jobs.length = 0;
    await runScheduled(env, at);
    expect(publishEffects()).toHaveLength(2);
    const later = ahead(120);
    expect((await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(later) })).status).toBe(200);
    expect((await u.api.delete(`/api/v1/scheduled_statuses/${d.id}`)).status).toBe(200);
    await runQueuedJobs();
    expect(await statusesOf(u)).toBe(0);
    expect(await row(s.id)).toMatchObject({ scheduled_at: later, claimed_at: null, claims: 0, failed_at: null });
  });

  it("a transient failure leaves the claim to expire (the claim is the retry owner, not the runner) and loses nothing; the next claim publishes", async () => {
    const u = await makeUser();
    const at = ahead(10);
    const s = await schedule(u, { status: "despite D1" }, at);
    queued.jobs.length = 0;
    await runScheduled(env, at);
    const [effect] = publishEffects();
    queued.jobs.length = 0;
    const db = createDb(env.DB);
    await env.DB.prepare("ALTER TABLE conversations RENAME TO conversations_away").run();
    try {
      await runJob(db, env, effect);
    } finally {
      await env.DB.prepare("ALTER TABLE conversations_away RENAME TO conversations").run();
    }
    expect(await statusesOf(u)).toBe(0);
    expect(await row(s.id)).toMatchObject({ failed_at: null, error: null, claimed_at: at });
    // Nothing goes back to the queue: one owner. The claim expires and the cron takes the row again.
    expect(queued.jobs).toEqual([]);
    await runScheduled(env, at + CLAIM_TTL_MS + 1);
    expect(publishEffects()).toHaveLength(1);
    await runQueuedJobs();
    expect(await statusesOf(u)).toBe(1);
    expect(await row(s.id)).toBeNull();
  });

  it("a permanent failure keeps the scheduled status with its error, retried no more until rescheduled", async () => {
    const u = await makeUser();
    const parent = await u.api.post("/api/v1/statuses", { status: "soon deleted" });
    const m = await upload(u);
    const at = ahead(10);
    const s = await schedule(u, { status: "orphan reply", in_reply_to_id: parent.body.id, media_ids: [m] }, at);
    expect((await u.api.delete(`/api/v1/statuses/${parent.body.id}`)).status).toBe(200);
    queued.jobs.length = 0;
    await runScheduled(env, at);
    expect(publishEffects()).toHaveLength(1);
    await runQueuedJobs(); // does not throw: nothing to retry
    expect(await statusesOf(u)).toBe(0);
    const r = await row(s.id);
    expect(r).toMatchObject({ claimed_at: null, error: "The post you are trying to reply to does not appear to exist." });
    expect(r?.failed_at).toEqual(expect.any(Number));
    // Still listed for its owner (with its past time), its media still reserved.
    expect((await u.api.get(`/api/v1/scheduled_statuses/${s.id}`)).body).toEqual(s);
    expect((await mediaRow(m))?.scheduled_status_id).toBe(pad(s.id));
    queued.jobs.length = 0;
    await runScheduled(env, at + CLAIM_TTL_MS * 10);
    expect(publishEffects()).toEqual([]);

    // Rescheduling re-arms it (and it fails again for the same reason); deleting frees the media.
    const again = ahead(20);
    expect((await u.api.put(`/api/v1/scheduled_statuses/${s.id}`, { scheduled_at: iso(again) })).status).toBe(200);
    expect(await row(s.id)).toMatchObject({ failed_at: null, error: null });
    await runScheduled(env, again);
    expect(publishEffects()).toHaveLength(1);
    await runQueuedJobs();
    expect((await row(s.id))?.error).toBe("The post you are trying to reply to does not appear to exist.");
    expect((await u.api.delete(`/api/v1/scheduled_statuses/${s.id}`)).status).toBe(200);
    expect(await mediaRow(m)).toEqual({ status_id: null, scheduled_status_id: null });
  });

  it("fails a row whose claims keep expiring, after MAX_CLAIMS, and an owner who can no longer post", async () => {
    const [u, gone] = await Promise.all([makeUser(), makeUser()]);
    const at = ahead(10);
    const s = await schedule(u, { status: "never published" }, at);
    const g = await schedule(gone, { status: "disabled owner" }, at);
    let t = at;
    for (let i = 0; i < MAX_CLAIMS; i++, t += CLAIM_TTL_MS) await runScheduled(env, t);
    expect((await row(s.id))?.claims).toBe(MAX_CLAIMS);
    await runScheduled(env, t);
    expect(await row(s.id)).toMatchObject({ error: "Publishing failed repeatedly", claimed_at: null });

    await env.DB.prepare("UPDATE users SET disabled = 1 WHERE account_id = ?1").bind(pad(gone.id)).run();
    await expect(publishScheduledStatus(createDb(env.DB), env, new Effects(cfg().origin), g.id)).resolves.toBe("skipped"); // failed above already
    expect((await row(g.id))?.error).toBe("Publishing failed repeatedly");
    await env.DB.prepare("UPDATE scheduled_statuses SET failed_at = NULL, error = NULL, claimed_at = ?2 WHERE id = ?1").bind(pad(g.id), t).run();
    await expect(publishScheduledStatus(createDb(env.DB), env, new Effects(cfg().origin), g.id)).resolves.toBe("failed");
    expect((await row(g.id))?.error).toBe("Your login is currently disabled");
  });
});
