// Web Push delivery against a simulated push service (fetchMock on https://push.example): the notification → jobs
// step (alerts, policy, live token), the encrypted message as the official apps read it (decrypted here with the
// subscription's private key, aes128gcm and legacy aesgcm), VAPID signatures checked against the advertised key,
// and what each answer of the push service does (201, 429 + Retry-After, 5xx, 404/410, network failure).
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Effect } from "../../src/effects/types";
import { padId } from "../../src/lib/text/ids";
import { deliverPush, MAX_PUSH_ATTEMPTS, pushJobsOf, pushTargetsStatement, PushRetry, retryPushJob, type PushJob } from "../../src/push";
import { issueToken } from "../../src/services/auth/tokens";
import { api, cfg, db, makeApp, makeUser, type TestUser } from "./helpers";
import { decryptAes128gcm, decryptAesgcm, makePushClient, pushService, verifyVapid, type PushClient } from "./push-fixtures";
import { queued } from "./queues";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
afterEach(() => fetchMock.assertNoPendingInterceptors());

let seq = 0;

interface Subscriber {
  user: TestUser;
  client: PushClient;
  endpoint: string;
  path: string;
  serverKey: string;
  subscriptionId: string;
}

async function subscriber(opts: { alerts?: Record<string, boolean>; policy?: string; standard?: boolean } = {}, user?: TestUser): Promise<Subscriber> {
  const u = user ?? (await makeUser());
  const client = await makePushClient();
  const path = `/sub/${++seq}`;
  const endpoint = `https://push.example${path}`;
  const res = await u.api.post("/api/v1/push/subscription", {
    subscription: { endpoint, keys: { p256dh: client.p256dh, auth: client.auth }, standard: opts.standard ?? true },
    data: { alerts: opts.alerts ?? { mention: true, follow: true, favourite: true, reblog: true }, policy: opts.policy ?? "all" },
  });
  expect(res.status).toBe(200);
  return { user: u, client, endpoint, path, serverKey: res.body.server_key, subscriptionId: res.body.id };
}

/** The same user signed in with another app (one subscription per token). */
async function anotherToken(u: TestUser): Promise<TestUser> {
  const app = await makeApp();
  const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["read", "write", "push"], reuse: false });
  return { ...u, token: t.accessToken, api: api(t.accessToken) };
}

/** The notification ids the captured effects announce (what the lead's `notify` effect carries). */
function notifiedIds(): string[] {
  return queued.jobs.flatMap((m) => (m.type === "effects" ? m.effects : [m as Effect])).flatMap((e) => (e.type === "notify" ? [e.notificationId] : []));
}

async function latestNotification(accountId: string): Promise<{ id: string; type: string }> {
  const row = await env.DB.prepare("SELECT id, type FROM notifications WHERE account_id = ? ORDER BY id DESC LIMIT 1")
    .bind(padId(accountId))
    .first<{ id: string; type: string }>();
  expect(row).not.toBeNull();
  return { id: row!.id.replace(/^0+/, ""), type: row!.type };
}

/** What the effects pipeline does with `notify` (notifyAll): the jobs for these notifications, from the push targets' statement. */
async function jobsOf(notificationIds: string[]): Promise<PushJob[]> {
  return pushJobsOf(await pushTargetsStatement(db(), notificationIds));
}
const jobsFor = (notificationId: string) => jobsOf([notificationId]);

const subscriptionExists = async (id: string) => !!(await env.DB.prepare("SELECT 1 AS x FROM web_push_subscriptions WHERE id = ?").bind(padId(id)).first());

describe("push delivery", () => {
  it("sends a follow as an aes128gcm message the official apps can read, signed with the advertised VAPID key", async () => {
    const s = await subscriber();
    const follower = await makeUser();
    await follower.api.patch("/api/v1/accounts/update_credentials", { display_name: "Fran <Follower> & co" });
    queued.jobs.length = 0;
    await follower.api.post(`/api/v1/accounts/${s.user.id}/follow`);
    const n = await latestNotification(s.user.id);
    expect(n.type).toBe("follow");
    expect(notifiedIds()).toContain(n.id);

    const jobs = await jobsFor(n.id);
    expect(jobs).toEqual([{ type: "push", subscriptionId: s.subscriptionId, notificationId: n.id }]);
    const seen = pushService(s.path, 201);
    await deliverPush(db(), env, cfg(), jobs[0]);
    expect(seen).toHaveLength(1);
    const { headers, body } = seen[0];
    expect(headers.get("content-encoding")).toBe("aes128gcm");
    expect(headers.get("content-type")).toBe("application/octet-stream");
    expect(headers.get("ttl")).toBe(String(48 * 3600));
    expect(headers.get("urgency")).toBe("normal");
    expect(headers.get("authorization")).toMatch(/^vapid t=/);
    await verifyVapid(headers, s.serverKey, s.endpoint);

    const text = await decryptAes128gcm(s.client, body);
    // notification_id is a JSON number with every digit kept (the iOS app decodes an integer).
    expect(text).toContain(`"notification_id":${n.id},`);
    const msg = JSON.parse(text);
    expect(msg).toEqual({
      access_token: s.user.token,
      preferred_locale: "en",
      notification_id: expect.any(Number),
      notification_type: "follow",
      icon: expect.stringMatching(/^http:\/\/tern\.test\/.+/),
      title: "Fran <Follower> & co is now following you",
      body: "",
    });
    // The subscription stays after a 201.
    expect(await subscriptionExists(s.subscriptionId)).toBe(true);
  });

  it("delivers to an endpoint kept as the client sent it, a root URL without its slash (https://push.example)", async () => {
    const u = await makeUser();
    const client = await makePushClient();
    const res = await u.api.post("/api/v1/push/subscription", {
      subscription: { endpoint: "https://push.example", keys: { p256dh: client.p256dh, auth: client.auth }, standard: true },
      data: { alerts: { follow: true }, policy: "all" },
    });
    expect(res.body.endpoint).toBe("https://push.example");
    const follower = await makeUser();
    await follower.api.post(`/api/v1/accounts/${u.id}/follow`);
    const n = await latestNotification(u.id);
    const jobs = await jobsFor(n.id);
    expect(jobs).toHaveLength(1);
    const seen = pushService("/", 201);
    await deliverPush(db(), env, cfg(), jobs[0]);
    expect(seen).toHaveLength(1);
    await verifyVapid(seen[0].headers, res.body.server_key, "https://push.example/");
    expect(JSON.parse(await decryptAes128gcm(client, seen[0].body)).notification_type).toBe("follow");
    expect(await subscriptionExists(res.body.id)).toBe(true);
  });

  it("sends a mention with the status text as the body, in legacy aesgcm for non-standard subscriptions", async () => {
    const s = await subscriber({ standard: false });
    const author = await makeUser();
    const long = "x".repeat(200);
    await author.api.post("/api/v1/statuses", { status: `@${s.user.username} hello <b>&amp; ${long}` });
    const n = await latestNotification(s.user.id);
    expect(n.type).toBe("mention");
    const [job] = await jobsFor(n.id);
    const seen = pushService(s.path, 201);
    await deliverPush(db(), env, cfg(), job);
    const { headers, body } = seen[0];
    expect(headers.get("content-encoding")).toBe("aesgcm");
    expect(headers.get("encryption")).toMatch(/^salt=[\w-]{22}$/);
    expect(headers.get("crypto-key")).toMatch(new RegExp(`^dh=[\\w-]{87};p256ecdsa=${s.serverKey}$`));
    expect(headers.get("authorization")).toMatch(/^WebPush /);
    await verifyVapid(headers, s.serverKey, s.endpoint);
    const msg = JSON.parse(await decryptAesgcm(s.client, body, headers));
    expect(msg).toMatchObject({ notification_type: "mention", title: `You were mentioned by ${author.username}`, access_token: s.user.token });
    // Plain text as the author typed it: the status's HTML is unescaped once, so a typed "&amp;" stays "&amp;".
    expect(msg.body.startsWith(`@${s.user.username} hello <b>&amp; xxx`)).toBe(true);
    expect(Array.from(msg.body as string)).toHaveLength(140);
    expect(msg.body.endsWith("...")).toBe(true);
  });

  it("picks subscriptions by alert type", async () => {
    const s = await subscriber({ alerts: { mention: true, follow: false } });
    const other = await makeUser();
    await other.api.post(`/api/v1/accounts/${s.user.id}/follow`);
    expect(await jobsFor((await latestNotification(s.user.id)).id)).toEqual([]);
    await other.api.post("/api/v1/statuses", { status: `@${s.user.username} hi` });
    expect(await jobsFor((await latestNotification(s.user.id)).id)).toHaveLength(1);
    // Three devices (tokens) of one user: each subscription that wants it gets its own job.
    const second = await subscriber({ alerts: { mention: true } }, await anotherToken(s.user));
    const third = await subscriber({ alerts: { follow: true } }, await anotherToken(s.user));
    expect(second.subscriptionId).not.toBe(s.subscriptionId);
    await other.api.post("/api/v1/statuses", { status: `@${s.user.username} again` });
    const ids = (await jobsFor((await latestNotification(s.user.id)).id)).map((j) => j.subscriptionId).sort();
    expect(ids).toEqual([s.subscriptionId, second.subscriptionId].sort());
    expect(ids).not.toContain(third.subscriptionId);

    // Several notifications at once (a pack's notify effects run together): each gets its own jobs, in one query.
    const mentionId = (await latestNotification(s.user.id)).id;
    await s.user.api.post(`/api/v1/accounts/${other.id}/follow`);
    const theirs = (await latestNotification(other.id)).id;
    const otherSub = await subscriber({ alerts: { follow: true } }, other);
    const both = await jobsOf([mentionId, theirs]);
    expect(
      both
        .filter((j) => j.notificationId === mentionId)
        .map((j) => j.subscriptionId)
        .sort(),
    ).toEqual(ids);
    expect(both.filter((j) => j.notificationId === theirs)).toEqual([{ type: "push", subscriptionId: otherSub.subscriptionId, notificationId: theirs }]);

    // Dotted alert keys (admin.sign_up, admin.report) are matched as keys, not JSON paths.
    const staff = await subscriber({ alerts: { "admin.sign_up": true } });
    const newcomer = await makeUser();
    const nid = "117000000000000001";
    await env.DB.prepare("INSERT INTO notifications (id, account_id, from_account_id, type, activity_id, created_at) VALUES (?, ?, ?, 'admin.sign_up', ?, ?)")
      .bind(padId(nid), padId(staff.user.id), padId(newcomer.id), padId(newcomer.id), Date.now())
      .run();
    expect(await jobsFor(nid)).toEqual([{ type: "push", subscriptionId: staff.subscriptionId, notificationId: nid }]);
    const seen = pushService(staff.path, 201);
    await deliverPush(db(), env, cfg(), (await jobsFor(nid))[0]);
    expect(JSON.parse(await decryptAes128gcm(staff.client, seen[0].body))).toMatchObject({
      notification_type: "admin.sign_up",
      title: `${newcomer.username} signed up`,
    });
  });

  it("pushes quotes and edits of quoted posts when their alerts are on (Mastodon 4.5's quote and quoted_update)", async () => {
    const s = await subscriber({ alerts: { quote: true, quoted_update: true } });
    const shown = (await s.user.api.get("/api/v1/push/subscription")).body.alerts;
    expect(shown).toMatchObject({ quote: true, quoted_update: true, mention: false });
    const quiet = await subscriber({ alerts: { mention: true } }, await anotherToken(s.user));
    expect((await quiet.user.api.get("/api/v1/push/subscription")).body.alerts).toMatchObject({ quote: false, quoted_update: false });
    const other = await makeUser();

    // Another account quotes the subscriber's post: pushed to the subscription that wants quotes only.
    const mine = (await s.user.api.post("/api/v1/statuses", { status: "worth quoting" })).body;
    expect((await other.api.post("/api/v1/statuses", { status: "well said", quoted_status_id: mine.id })).status).toBe(200);
    const quoted = await latestNotification(s.user.id);
    expect(quoted.type).toBe("quote");
    const jobs = await jobsFor(quoted.id);
    expect(jobs.map((j) => j.subscriptionId)).toEqual([s.subscriptionId]);
    let seen = pushService(s.path, 201);
    await deliverPush(db(), env, cfg(), jobs[0]!);
    expect(JSON.parse(await decryptAes128gcm(s.client, seen[0]!.body))).toMatchObject({
      notification_type: "quote",
      title: `${other.username} quoted your post`,
      body: "well said",
    });

    // The subscriber quoted the other account's post, which is then edited.
    const theirs = (await other.api.post("/api/v1/statuses", { status: "v1" })).body;
    expect((await s.user.api.post("/api/v1/statuses", { status: "quoting", quoted_status_id: theirs.id })).status).toBe(200);
    expect((await other.api.put(`/api/v1/statuses/${theirs.id}`, { status: "v2" })).status).toBe(200);
    const edited = await latestNotification(s.user.id);
    expect(edited.type).toBe("quoted_update");
    const [job] = await jobsFor(edited.id);
    expect(job?.subscriptionId).toBe(s.subscriptionId);
    seen = pushService(s.path, 201);
    await deliverPush(db(), env, cfg(), job!);
    expect(JSON.parse(await decryptAes128gcm(s.client, seen[0]!.body))).toMatchObject({
      notification_type: "quoted_update",
      title: `${other.username} edited a post you have quoted`,
    });
  });

  it("applies the policy: who the sender must be relative to the recipient", async () => {
    const stranger = await makeUser();
    const friend = await makeUser(); // followed by the recipient
    const fan = await makeUser(); // follows the recipient

    const mention = async (from: TestUser, to: TestUser) => {
      await from.api.post("/api/v1/statuses", { status: `@${to.username} ping ${++seq}` });
      return jobsFor((await latestNotification(to.id)).id);
    };
    const followed = await subscriber({ policy: "followed", alerts: { mention: true } });
    await followed.user.api.post(`/api/v1/accounts/${friend.id}/follow`);
    await fan.api.post(`/api/v1/accounts/${followed.user.id}/follow`);
    expect(await mention(stranger, followed.user)).toEqual([]);
    expect(await mention(fan, followed.user)).toEqual([]);
    expect(await mention(friend, followed.user)).toHaveLength(1);

    const follower = await subscriber({ policy: "follower", alerts: { mention: true } });
    await follower.user.api.post(`/api/v1/accounts/${friend.id}/follow`);
    await fan.api.post(`/api/v1/accounts/${follower.user.id}/follow`);
    expect(await mention(stranger, follower.user)).toEqual([]);
    expect(await mention(friend, follower.user)).toEqual([]);
    expect(await mention(fan, follower.user)).toHaveLength(1);

    const none = await subscriber({ policy: "none", alerts: { mention: true } });
    await none.user.api.post(`/api/v1/accounts/${friend.id}/follow`);
    expect(await mention(friend, none.user)).toEqual([]);

    const all = await subscriber({ policy: "all", alerts: { mention: true } });
    expect(await mention(stranger, all.user)).toHaveLength(1);

    // The policy is checked again when the job runs: switched to none in between, nothing is sent.
    const [job] = await mention(stranger, all.user);
    await all.user.api.put("/api/v1/push/subscription", { data: { alerts: { mention: true }, policy: "none" } });
    await deliverPush(db(), env, cfg(), job); // no interceptor: a request would fail the test
  });

  it("retries 429 honouring Retry-After, and 5xx with a growing delay, keeping the subscription", async () => {
    const s = await subscriber();
    const other = await makeUser();
    await other.api.post(`/api/v1/accounts/${s.user.id}/follow`);
    const [job] = await jobsFor((await latestNotification(s.user.id)).id);

    pushService(s.path, 429, { "retry-after": "120" });
    const err = await deliverPush(db(), env, cfg(), job).catch((e) => e);
    expect(err).toBeInstanceOf(PushRetry);
    expect((err as PushRetry).delaySeconds).toBe(120);
    expect(await subscriptionExists(s.subscriptionId)).toBe(true);

    const next = retryPushJob(job, err as PushRetry)!;
    expect(next).toEqual({ job: { ...job, attempt: 1 }, delaySeconds: 120 });

    pushService(s.path, 503);
    const err2 = (await deliverPush(db(), env, cfg(), next.job).catch((e) => e)) as PushRetry;
    expect(err2).toBeInstanceOf(PushRetry);
    expect(err2.delaySeconds).toBeGreaterThanOrEqual(2 ** 4 + 15);

    // A Retry-After given as an HTTP date.
    pushService(s.path, 503, { "retry-after": new Date(Date.now() + 90_000).toUTCString() });
    const err3 = (await deliverPush(db(), env, cfg(), job).catch((e) => e)) as PushRetry;
    expect(err3.delaySeconds).toBeGreaterThan(80);
    expect(err3.delaySeconds).toBeLessThanOrEqual(91);

    // Bounded: the last attempt is not retried.
    expect(retryPushJob({ ...job, attempt: MAX_PUSH_ATTEMPTS - 1 }, err3)).toBeNull();

    // A network failure is retried too.
    fetchMock.get("https://push.example").intercept({ path: s.path, method: "POST" }).replyWithError(new Error("connection reset"));
    expect(await deliverPush(db(), env, cfg(), job).catch((e) => e)).toBeInstanceOf(PushRetry);

    pushService(s.path, 201);
    await deliverPush(db(), env, cfg(), job);
    expect(await subscriptionExists(s.subscriptionId)).toBe(true);
  });

  it("deletes the subscription when the push service answers 410 or 404, and sends nothing more", async () => {
    for (const status of [410, 404]) {
      const s = await subscriber();
      const other = await makeUser();
      await other.api.post(`/api/v1/accounts/${s.user.id}/follow`);
      const [job] = await jobsFor((await latestNotification(s.user.id)).id);
      pushService(s.path, status);
      await deliverPush(db(), env, cfg(), job); // returns: nothing to retry
      expect(await subscriptionExists(s.subscriptionId)).toBe(false);
      expect((await s.user.api.get("/api/v1/push/subscription")).status).toBe(404);
      // A job still queued for it finds nothing and sends nothing (no interceptor is set).
      await deliverPush(db(), env, cfg(), job);
      await other.api.post("/api/v1/statuses", { status: `@${s.user.username} after ${status}` });
      expect(await jobsFor((await latestNotification(s.user.id)).id)).toEqual([]);
    }
  });

  it("sends nothing for a revoked token, a deleted notification, or an endpoint the guard now refuses", async () => {
    const s = await subscriber();
    const other = await makeUser();
    await other.api.post(`/api/v1/accounts/${s.user.id}/follow`);
    const n = await latestNotification(s.user.id);
    const [job] = await jobsFor(n.id);

    // The notification is gone (unfollow retracts it): the job does nothing.
    await other.api.post(`/api/v1/accounts/${s.user.id}/unfollow`);
    await deliverPush(db(), env, cfg(), job);

    // An endpoint that slipped in before validation (or a policy change) is refused at send time and dropped.
    await other.api.post(`/api/v1/accounts/${s.user.id}/follow`);
    const n2 = await latestNotification(s.user.id);
    await env.DB.prepare("UPDATE web_push_subscriptions SET endpoint = 'https://10.0.0.1/x' WHERE id = ?").bind(padId(s.subscriptionId)).run();
    const [job2] = await jobsFor(n2.id);
    await deliverPush(db(), env, cfg(), job2);
    expect(await subscriptionExists(s.subscriptionId)).toBe(false);

    // A revoked token's subscription gets no jobs (and the trigger removes it).
    const t = await subscriber();
    await env.DB.prepare("UPDATE oauth_access_tokens SET revoked_at = 1 WHERE user_id = ?").bind(padId(t.user.userId)).run();
    await other.api.post(`/api/v1/accounts/${t.user.id}/follow`);
    expect(await jobsFor((await latestNotification(t.user.id)).id)).toEqual([]);
    expect(await subscriptionExists(t.subscriptionId)).toBe(false);
  });

  it("gives no jobs for a notification that was never written (a blocked sender)", async () => {
    const s = await subscriber();
    const blocked = await makeUser();
    await s.user.api.post(`/api/v1/accounts/${blocked.id}/block`);
    queued.jobs.length = 0;
    await blocked.api.post("/api/v1/statuses", { status: `@${s.user.username} hello` });
    const ids = notifiedIds();
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(await jobsFor(id)).toEqual([]);
  });
});
