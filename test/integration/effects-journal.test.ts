// An invocation that dies between its write's commit and its queue send loses no effect (src/effects/commit.ts): the
// effects were written in the write's own batch, and the every-minute cron sends them once their grace is over; then
// each runs exactly once: the fan-out, the federation and the notification, for a post, a favourite, a follow and a
// delete. While the invocation lives, the consumer that runs its message deletes the journal rows, so the cron sends
// nothing twice; a batch that changed nothing (a parallel delete) journals nothing.
import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runJob } from "../../src/background/effects-runner";
import { runScheduled } from "../../src/background/cron";
import { createDb } from "../../src/db/client";
import { JOURNAL_GRACE_MS } from "../../src/effects/commit";
import { claimJournal, FIRST_SEND } from "../../src/effects/journal";
import { resendPending } from "../../src/effects/pending";
import type { Effect, JobMessage } from "../../src/effects/types";
import worker from "../../src/index";
import { padId } from "../../src/lib/text/ids";
import { remoteStatus, take } from "./federation-outbound-fixtures";
import { ORIGIN, type TestUser } from "./helpers";
import { png } from "./media-fixtures";
import { installQueueCapture, queued, unpack } from "./queues";
import { type EffectsWorld, effectsWorld, homeIds, notificationsOf, notifyRuns } from "./effects-fixtures";

const journalRows = async () => (await env.DB.prepare("SELECT count(*) AS n FROM pending_effects").first<{ n: number }>())?.n ?? 0;

/**
 * Sends a request whose invocation dies at its queue send: the send is reached (the write committed, the handler
 * answered) and never answers, so nothing after it runs. Resolves once the send was reached.
 */
async function dyingAtSend(u: TestUser, method: string, path: string, body?: unknown): Promise<void> {
  let reached!: () => void;
  const atSend = new Promise<void>((r) => {
    reached = r;
  });
  const never = () => {
    reached();
    return new Promise<never>(() => {});
  };
  vi.spyOn(env.JOBS, "send").mockImplementation(never);
  vi.spyOn(env.JOBS, "sendBatch").mockImplementation(never);
  void worker.fetch(
    new Request(`${ORIGIN}${path}`, {
      method,
      headers: { authorization: `Bearer ${u.token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    // The send would give up after this long; the test is over well before.
    { ...env, QUEUE_SEND_TIMEOUT_MS: String(24 * 3600_000) } as typeof env,
    createExecutionContext(),
  );
  await atSend;
  vi.restoreAllMocks();
  installQueueCapture();
}

/** The cron, `ms` from now; returns every effect it sent again. */
async function cronIn(ms: number): Promise<Effect[]> {
  queued.jobs.length = 0;
  await runScheduled(env, Date.now() + ms, { housekeeping: false, hourly: false });
  return queued.jobs.flatMap(unpack);
}

/** The cron within the journal's grace sends nothing; after it, what the dead invocation left. */
async function recovered(): Promise<Effect[]> {
  expect(await cronIn(0)).toEqual([]);
  const effects = await cronIn(JOURNAL_GRACE_MS + 60_000);
  expect(effects.length).toBeGreaterThan(0);
  return effects;
}

const delivered = async () => (await take()).map((a) => ({ type: a.activity.type as string, inboxes: a.inboxes }));

/** Nothing is left to send, now or later. */
async function nothingLeft() {
  expect(await journalRows()).toBe(0);
  expect(await resendPending(env, Date.now() + 24 * 3600_000)).toBe(0);
}

let author: TestUser;
let follower: TestUser;
let mentioned: TestUser;
let remote: EffectsWorld["remote"];

beforeEach(async () => {
  ({ author, follower, mentioned, remote } = await effectsWorld());
});
afterEach(() => vi.restoreAllMocks());

describe("an invocation that dies between its commit and its queue send", () => {
  it("a post: its fan-out, federation and mention run exactly once, after the journal's grace", async () => {
    await dyingAtSend(author, "POST", "/api/v1/statuses", { status: `@${mentioned.username} still here` });
    const [row] = (await env.DB.prepare("SELECT id FROM statuses WHERE account_id = ? ORDER BY id DESC LIMIT 1").bind(padId(author.id)).all<{ id: string }>())
      .results;
    const id = String(row?.id).replace(/^0+/, "");
    expect(await homeIds(follower)).not.toContain(id);

    const effects = await recovered();
    expect(effects.filter((e) => e.type === "fanout" && e.statusId === id)).toHaveLength(1);
    expect((await delivered()).filter((d) => d.type === "Create")).toEqual([{ type: "Create", inboxes: [remote.sharedInbox] }]);
    expect((await homeIds(follower)).filter((s) => s === id)).toHaveLength(1);
    const mentions = await notificationsOf(mentioned, "mention");
    expect(mentions).toHaveLength(1);
    expect(notifyRuns(effects, mentions)).toBe(1);
    await nothingLeft();
  });

  it("a favourite: one notification for a local author and one Like to a remote one", async () => {
    const local = await mentioned.api.post("/api/v1/statuses", { status: "like me" });
    const far = await remoteStatus(remote);
    await take();
    await dyingAtSend(author, "POST", `/api/v1/statuses/${local.body.id}/favourite`);
    await dyingAtSend(author, "POST", `/api/v1/statuses/${far.id}/favourite`);
    const effects = await recovered();
    expect(await delivered()).toEqual([{ type: "Like", inboxes: [remote.inbox] }]);
    const favs = await notificationsOf(mentioned, "favourite");
    expect(favs).toHaveLength(1);
    expect(notifyRuns(effects, favs)).toBe(1);
    await nothingLeft();
  });

  it("a follow: one notification and the followed account's posts in the home feed; one Follow to a remote account", async () => {
    const earlier = await mentioned.api.post("/api/v1/statuses", { status: "before you followed" });
    await take();
    await dyingAtSend(author, "POST", `/api/v1/accounts/${mentioned.id}/follow`);
    await dyingAtSend(author, "POST", `/api/v1/accounts/${remote.id}/follow`);
    const effects = await recovered();
    expect(await delivered()).toEqual([{ type: "Follow", inboxes: [remote.inbox] }]);
    const follows = await notificationsOf(mentioned, "follow");
    expect(follows).toHaveLength(1);
    expect(notifyRuns(effects, follows)).toBe(1);
    expect((await homeIds(author)).filter((id) => id === earlier.body.id)).toHaveLength(1);
    await nothingLeft();
  });

  it("a delete: one Delete reaches the remote follower, and the status is in no feed", async () => {
    const posted = await author.api.post("/api/v1/statuses", { status: "soon gone" });
    await take();
    expect(await homeIds(follower)).toContain(posted.body.id);
    await dyingAtSend(author, "DELETE", `/api/v1/statuses/${posted.body.id}`);
    const effects = await recovered();
    expect(effects.filter((e) => e.type === "unfanout" && e.statusId === posted.body.id)).toHaveLength(1);
    expect((await delivered()).filter((d) => d.type === "Delete")).toEqual([{ type: "Delete", inboxes: [remote.sharedInbox] }]);
    expect(await homeIds(follower)).not.toContain(posted.body.id);
    await nothingLeft();
  });
});

describe("while the invocation lives", () => {
  it("the consumer that runs the message deletes its journal rows, so the cron sends nothing twice", async () => {
    const sent: JobMessage[] = [];
    vi.spyOn(env.JOBS, "send").mockImplementation(async (m: unknown) => {
      sent.push(m as JobMessage);
      return {} as QueueSendResponse;
    });
    const res = await author.api.post("/api/v1/statuses", { status: "one journal row" });
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(1);
    const [message] = sent as [JobMessage];
    expect(message.type === "effects" && message.journal).toHaveLength(1);
    expect(await journalRows()).toBe(1);
    // Within its grace the cron leaves it to the consumer.
    expect(await resendPending(env)).toBe(0);
    vi.restoreAllMocks();
    installQueueCapture();
    await runJob(createDb(env.DB), env, message);
    await nothingLeft();
    expect((await delivered()).filter((d) => d.type === "Create")).toHaveLength(1);
  });

  it("two deletes at once: one answers 200 and one 404, one Delete goes out, and the loser journals nothing", async () => {
    const posted = await author.api.post("/api/v1/statuses", { status: "deleted twice" });
    await take();
    const answers = await Promise.all([author.api.delete(`/api/v1/statuses/${posted.body.id}`), author.api.delete(`/api/v1/statuses/${posted.body.id}`)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    expect((await delivered()).filter((d) => d.type === "Delete")).toHaveLength(1);
    await nothingLeft();
  });
});

/** Records what the request and then the cron send, as the queue would deliver them, without running them. */
function recordSends(): JobMessage[] {
  const sent: JobMessage[] = [];
  vi.spyOn(env.JOBS, "send").mockImplementation(async (m: unknown) => {
    sent.push(m as JobMessage);
    return {} as QueueSendResponse;
  });
  vi.spyOn(env.JOBS, "sendBatch").mockImplementation(async (ms: Iterable<MessageSendRequest<unknown>>) => {
    for (const m of ms) sent.push(m.body as JobMessage);
    return {} as QueueSendBatchResponse;
  });
  return sent;
}

describe("what a write's batch returned, recorded after it", () => {
  it("rides in the journal row's message (one queue operation), and runs even when another delivery holds the row", async () => {
    const form = new FormData();
    form.append("file", new File([await png(4, 4)], "p.png", { type: "image/png" }));
    const media = await author.api.post("/api/v2/media", form, "multipart");
    const posted = await author.api.post("/api/v1/statuses", { status: "soon gone", media_ids: [media.body.id] });
    const [file] = (await env.DB.prepare("SELECT file_key FROM media_attachments WHERE id = ?").bind(padId(media.body.id)).all<{ file_key: string }>()).results;
    expect(await env.MEDIA.head(file!.file_key)).not.toBeNull();
    await take();
    queued.jobs.length = 0;
    const sent = recordSends();
    expect((await author.api.delete(`/api/v1/statuses/${posted.body.id}?delete_media=true`)).status).toBe(200);
    // One message: the journaled effects (the status's unfanout, its Delete) and, as `extra`, what the batch returned:
    // the media's objects to delete and the streams' delete.
    expect(sent).toHaveLength(1);
    const [message] = sent as [JobMessage];
    if (message.type !== "effects") throw new Error("a pack was expected");
    expect(message.journal).toHaveLength(1);
    expect(message.effects.map((e) => e.type)).toEqual(["unfanout", "federate"]);
    expect(message.extra?.map((e) => e.type)).toEqual(["delete_media", "stream_delete"]);
    // The cron's send of the row arrives first and runs what the row keeps; the request's message, whose row is held,
    // still runs its extra: the objects go.
    await runScheduled(env, Date.now() + JOURNAL_GRACE_MS + 60_000, { housekeeping: false, hourly: false });
    const again = sent[sent.length - 1] as JobMessage;
    expect(again.type === "effects" && again.extra).toBeFalsy();
    vi.restoreAllMocks();
    installQueueCapture();
    const d = createDb(env.DB);
    await runJob(d, env, again);
    expect(await env.MEDIA.head(file!.file_key)).not.toBeNull();
    await runJob(d, env, message);
    expect(await env.MEDIA.head(file!.file_key)).toBeNull();
    expect((await delivered()).filter((a) => a.type === "Delete")).toHaveLength(1);
    await nothingLeft();
  });
});

describe("a message that waited in the queue past its grace", () => {
  for (const order of ["the request's first", "the cron's first"] as const) {
    it(`and the cron's second send of it both reach the consumer (${order}): its effects run once`, async () => {
      const sent = recordSends();
      expect((await author.api.post("/api/v1/statuses", { status: "late in the queue" })).status).toBe(200);
      await runScheduled(env, Date.now() + JOURNAL_GRACE_MS + 60_000, { housekeeping: false, hourly: false });
      expect(sent).toHaveLength(2);
      const [first, again] = sent as [JobMessage, JobMessage];
      expect(again.type === "effects" && again.token).toMatch(/^r\d+$/);
      vi.restoreAllMocks();
      installQueueCapture();
      const d = createDb(env.DB);
      for (const m of order === "the request's first" ? [first, again] : [again, first]) await runJob(d, env, m);
      expect((await delivered()).filter((a) => a.type === "Create")).toEqual([{ type: "Create", inboxes: [remote.sharedInbox] }]);
      await nothingLeft();
    });
  }

  it("a consumer that claimed it and died: the claim expires, the cron sends it again, and it runs once", async () => {
    const sent = recordSends();
    expect((await author.api.post("/api/v1/statuses", { status: "claimed, then lost" })).status).toBe(200);
    const [first] = sent as [JobMessage];
    const journal = first.type === "effects" ? (first.journal ?? []) : [];
    expect(journal).toHaveLength(1);
    // A consumer took it and died before running it.
    expect(await claimJournal(env.DB, journal, FIRST_SEND)).toBe(true);
    // Within the claim, the cron leaves it; another delivery finds it taken.
    expect(await resendPending(env, Date.now() + 60_000)).toBe(0);
    expect(await claimJournal(env.DB, journal, "r1")).toBe(false);
    // Past the claim, on the consumer's clock too.
    const later = Date.now() + 2 * JOURNAL_GRACE_MS + 60_000;
    await runScheduled(env, later, { housekeeping: false, hourly: false });
    const again = sent[sent.length - 1] as JobMessage;
    expect(again).not.toBe(first);
    vi.restoreAllMocks();
    installQueueCapture();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(later + 1000);
    try {
      await runJob(createDb(env.DB), env, again);
    } finally {
      vi.useRealTimers();
    }
    expect((await delivered()).filter((a) => a.type === "Create")).toHaveLength(1);
    await nothingLeft();
  });
});
