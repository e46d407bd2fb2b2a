// Effects survive a failed queue send (src/effects/send.ts, pending.ts): when the JOBS binding throws (as it does on
// the queue service's 5xx) or does not answer, the write that committed still answers 200, its effects are kept in
// D1, and the every-minute cron sends them once the queue is back; then each effect runs exactly once: the fan-out,
// the federation and the notification, for a post, a favourite, a follow and a delete.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runScheduled } from "../../src/background/cron";
import { JOURNAL_GRACE_MS } from "../../src/effects/commit";
import { resendPending } from "../../src/effects/pending";
import type { Effect } from "../../src/effects/types";
import worker from "../../src/index";
import { padId } from "../../src/lib/text/ids";
import { remoteStatus, take } from "./federation-outbound-fixtures";
import { ORIGIN, type TestUser } from "./helpers";
import { installQueueCapture, queued, unpack } from "./queues";
import { type EffectsWorld, effectsWorld, homeIds, notificationsOf, notifyRuns } from "./effects-fixtures";

/** The JOBS binding fails every send: it throws (the queue service answering 5xx) or never answers. */
function breakQueue(mode: "throw" | "hang") {
  const fail = mode === "throw" ? () => Promise.reject(new Error("Queue send failed: 503 Service Unavailable")) : () => new Promise<never>(() => {});
  vi.spyOn(env.JOBS, "send").mockImplementation(fail);
  vi.spyOn(env.JOBS, "sendBatch").mockImplementation(fail);
}

/** Kept effects the next cron run sends (journal rows still within their grace wait for their consumer). */
const pending = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM pending_effects WHERE sweep_after <= ?").bind(Date.now()).first<{ n: number }>())?.n ?? 0;

/** The queue is back: the next cron run sends what was kept; returns every effect that then ran. */
async function recover(): Promise<Effect[]> {
  installQueueCapture();
  await runScheduled(env, Date.now(), { housekeeping: false, hourly: false });
  expect(await pending()).toBe(0);
  const effects = queued.jobs.flatMap(unpack);
  return effects;
}

/** Runs what recovery queued, and returns the activities delivered (type → inboxes). */
async function deliveredAfter(): Promise<{ type: string; inboxes: string[] }[]> {
  return (await take()).map((a) => ({ type: a.activity.type, inboxes: a.inboxes }));
}

/** Calls the Worker with env overrides (the hanging queue's short timeout). */
async function call(u: TestUser, method: string, path: string, body: unknown, overrides: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, {
      method,
      headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    { ...env, ...overrides } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

let author: TestUser;
let follower: TestUser;
let mentioned: TestUser;
let remote: EffectsWorld["remote"];

beforeEach(async () => {
  ({ author, follower, mentioned, remote } = await effectsWorld());
});
afterEach(() => vi.restoreAllMocks());

describe("a queue send that fails loses no effect", () => {
  for (const mode of ["throw", "hang"] as const) {
    it(`a post (queue ${mode === "throw" ? "throws" : "never answers"}): 200, then its fan-out, federation and mention run exactly once after recovery`, async () => {
      breakQueue(mode);
      const res = await call(
        author,
        "POST",
        "/api/v1/statuses",
        { status: `@${mentioned.username} hello` },
        mode === "hang" ? { QUEUE_SEND_TIMEOUT_MS: "100" } : {},
      );
      expect(res.status).toBe(200);
      expect((await author.api.get(`/api/v1/statuses/${res.body.id}`)).status).toBe(200);
      expect(await pending()).toBeGreaterThan(0);
      expect(await homeIds(follower)).not.toContain(res.body.id);

      const effects = await recover();
      expect(effects.filter((e) => e.type === "fanout" && e.statusId === res.body.id)).toHaveLength(1);
      const delivered = await deliveredAfter();
      expect(delivered.filter((d) => d.type === "Create")).toEqual([{ type: "Create", inboxes: [remote.sharedInbox] }]);
      expect((await homeIds(follower)).filter((id) => id === res.body.id)).toHaveLength(1);
      const mentions = await notificationsOf(mentioned, "mention");
      expect(mentions).toHaveLength(1);
      expect(notifyRuns(effects, mentions)).toBe(1);
      // Nothing is sent twice.
      expect(await resendPending(env)).toBe(0);
    });
  }

  it("a favourite: 200, then one notification for a local author and one Like to a remote one", async () => {
    const local = await mentioned.api.post("/api/v1/statuses", { status: "like me" });
    const far = await remoteStatus(remote);
    queued.jobs.length = 0;
    breakQueue("throw");
    expect((await author.api.post(`/api/v1/statuses/${local.body.id}/favourite`)).status).toBe(200);
    expect((await author.api.post(`/api/v1/statuses/${far.id}/favourite`)).status).toBe(200);
    expect(await pending()).toBeGreaterThan(0);
    const effects = await recover();
    const delivered = await deliveredAfter();
    expect(delivered).toEqual([{ type: "Like", inboxes: [remote.inbox] }]);
    const favs = await notificationsOf(mentioned, "favourite");
    expect(favs).toHaveLength(1);
    expect(notifyRuns(effects, favs)).toBe(1);
  });

  it("a follow: 200, then one notification and the followed account's posts in the home feed; one Follow to a remote account", async () => {
    const earlier = await mentioned.api.post("/api/v1/statuses", { status: "before you followed" });
    queued.jobs.length = 0;
    breakQueue("throw");
    expect((await author.api.post(`/api/v1/accounts/${mentioned.id}/follow`)).status).toBe(200);
    expect((await author.api.post(`/api/v1/accounts/${remote.id}/follow`)).status).toBe(200);
    expect(await pending()).toBeGreaterThan(0);
    const effects = await recover();
    const delivered = await deliveredAfter();
    expect(delivered).toEqual([{ type: "Follow", inboxes: [remote.inbox] }]);
    const follows = await notificationsOf(mentioned, "follow");
    expect(follows).toHaveLength(1);
    expect(notifyRuns(effects, follows)).toBe(1);
    expect((await homeIds(author)).filter((id) => id === earlier.body.id)).toHaveLength(1);
  });

  it("a delete: 200, then the status leaves the followers' feeds and one Delete reaches the remote follower", async () => {
    const posted = await author.api.post("/api/v1/statuses", { status: "soon gone" });
    await take();
    expect(await homeIds(follower)).toContain(posted.body.id);
    breakQueue("throw");
    expect((await author.api.delete(`/api/v1/statuses/${posted.body.id}`)).status).toBe(200);
    expect(await pending()).toBeGreaterThan(0);
    await recover();
    const delivered = await deliveredAfter();
    expect(delivered.filter((d) => d.type === "Delete")).toEqual([{ type: "Delete", inboxes: [remote.sharedInbox] }]);
    expect(await homeIds(follower)).not.toContain(posted.body.id);
  });

  it("a queue that refuses while D1 refuses to mark the journal too: the saved write still answers 200, and its effects run once their grace is over", async () => {
    breakQueue("throw");
    // The write's batch (and its journal row) commits; the update that hands the row to the next cron run fails.
    await env.DB.prepare("CREATE TRIGGER refuse_release BEFORE UPDATE ON pending_effects BEGIN SELECT RAISE(ABORT, 'D1 refuses'); END").run();
    let id: string;
    try {
      const res = await call(author, "POST", "/api/v1/statuses", { status: "saved anyway" });
      expect(res.status).toBe(200);
      id = res.body.id;
      expect((await author.api.get(`/api/v1/statuses/${id}`)).status).toBe(200);
    } finally {
      await env.DB.prepare("DROP TRIGGER refuse_release").run();
    }
    vi.restoreAllMocks();
    installQueueCapture();
    expect(await pending()).toBe(0);
    await runScheduled(env, Date.now(), { housekeeping: false, hourly: false });
    expect(queued.jobs).toHaveLength(0);
    await runScheduled(env, Date.now() + JOURNAL_GRACE_MS + 60_000, { housekeeping: false, hourly: false });
    expect(queued.jobs.flatMap(unpack).filter((e) => e.type === "fanout" && e.statusId === id)).toHaveLength(1);
    expect((await deliveredAfter()).filter((d) => d.type === "Create")).toEqual([{ type: "Create", inboxes: [remote.sharedInbox] }]);
    expect(await homeIds(follower)).toContain(id);
  });

  it("the cron keeps what the queue still refuses, and keeps a delayed effect's remaining delay", async () => {
    breakQueue("throw");
    await author.api.post("/api/v1/statuses", { status: "waiting" });
    const kept = await pending();
    expect(kept).toBeGreaterThan(0);
    await runScheduled(env, Date.now(), { housekeeping: false, hourly: false });
    expect(await pending()).toBe(kept);
    vi.restoreAllMocks();
    installQueueCapture();
    const delayed = { type: "effects" as const, effects: [{ type: "fetch_card" as const, statusId: "1" }] };
    await env.DB.prepare("INSERT INTO pending_effects (id, body, delay_seconds, created_at) VALUES (?, ?, 600, ?)")
      .bind(padId("7"), JSON.stringify(delayed), Date.now() - 100_000)
      .run();
    const sent: { delaySeconds?: number }[] = [];
    vi.spyOn(env.JOBS, "sendBatch").mockImplementation(async (ms: Iterable<MessageSendRequest<unknown>>) => {
      for (const m of ms) sent.push({ delaySeconds: m.delaySeconds });
      return {} as QueueSendBatchResponse;
    });
    expect(await resendPending(env)).toBe(kept + 1);
    const withDelay = sent.filter((s) => s.delaySeconds);
    expect(withDelay).toHaveLength(1);
    expect(withDelay[0]?.delaySeconds).toBeGreaterThanOrEqual(499);
    expect(withDelay[0]?.delaySeconds).toBeLessThanOrEqual(501);
  });
});
