// Who receives what on the streaming API: a status reaches exactly the streams on which the REST timelines would show
// it to that viewer (home and list feeds as fan-out filled them, direct, public and hashtag timelines with their
// rules, the viewer's blocks, mutes, domain blocks, languages and filters), and the other events go where Mastodon
// publishes them. "Not delivered" is shown by a later event that is delivered: events reach a socket in order.
import { env } from "cloudflare:test";
import { describe, expect } from "vitest";
import { createDb } from "../../src/db/client";
import { accounts } from "../../src/db/schema";
import { countingD1 } from "../../src/lib/limits/d1-counter";
import { snowflake } from "../../src/lib/text/ids";
import { type AheadParts, publishReadAhead } from "../../src/streaming/read-ahead";
import {
  publishDelete,
  publishNotifications,
  publishStatuses,
  publishRelationsChanged,
  publishStatus,
  publishStatusUpdate,
  publishToAccount,
  publishToAllUsers,
  statusStreamInfo,
} from "../../src/streaming/publish";
import { routerStub } from "../../src/streaming/router";
import { fanOut, unfanOut } from "../../src/timelines/fanout";
import { Effects } from "../../src/effects/collector";
import { cfg, db, makeUser, ORIGIN, type TestUser } from "./helpers";
import { follow, insertStatus } from "./feeds-fixtures";
import { fanOutAndPublish, itStreams, payloadOf, ws, type StreamMessage, type WsClient } from "./streaming-fixtures";
import { runQueuedJobs } from "./queues";
import { handleJobs, runJob } from "../../src/background/effects-runner";
import type { JobMessage } from "../../src/effects/types";

const pad = (id: string) => id.padStart(20, "0");

/** The (stream, status id) pairs of the next `n` messages. */
async function nextUpdates(c: WsClient, n: number): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) {
    const m = await c.next();
    out.push([(m.stream ?? []).join(" "), m.event === "delete" ? `delete ${m.payload}` : payloadOf(m).id]);
  }
  return out;
}

async function makeRemote(username: string, domain: string) {
  const id = snowflake();
  const now = Date.now();
  await db()
    .insert(accounts)
    .values({ id, username, domain, uri: `https://${domain}/users/${username}`, createdAt: now, updatedAt: now });
  return { id, username };
}

async function addMedia(statusId: string, accountId: string) {
  await env.DB.prepare(
    "INSERT INTO media_attachments (id, account_id, status_id, type, file_key, content_type, processing, created_at) VALUES (?, ?, ?, 'image', 'x', 'image/png', 0, ?)",
  )
    .bind(pad(snowflake()), pad(accountId), pad(statusId), Date.now())
    .run();
}

async function addTag(statusId: string, name: string) {
  await env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, created_at) VALUES (?, ?, ?, ?)")
    .bind(pad(snowflake()), name, name, Date.now())
    .run();
  await env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ?").bind(pad(statusId), name).run();
}

/** `env` whose Streaming stubs record each router method called on them. */
function countingRouterCalls(calls: string[]): typeof env {
  const ns = env.STREAMING;
  const STREAMING = {
    idFromName: (name: string) => ns.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = ns.get(id) as unknown as Record<string, unknown>;
      return new Proxy(stub, {
        get(target, prop) {
          const v = Reflect.get(target, prop);
          if (typeof prop !== "string" || !prop.startsWith("router") || typeof v !== "function") return v;
          return (...args: unknown[]) => {
            calls.push(prop);
            // Reflect.apply: an RPC stub's method is itself a stub, whose `apply` would be a remote call.
            return Reflect.apply(v as (...a: unknown[]) => unknown, target, args);
          };
        },
      });
    },
  };
  return { ...env, STREAMING } as unknown as typeof env;
}

/** A status of `owner` that `fan` favourites through the API: its id and the favourite notification's. */
async function favouritedBy(owner: TestUser, fan: TestUser): Promise<{ id: string; nid: string }> {
  const id = await insertStatus(owner);
  expect((await fan.api.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(200);
  const row = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM notifications WHERE account_id = ? AND type = 'favourite'")
    .bind(pad(owner.id))
    .first<{ id: string }>();
  return { id, nid: row!.id.replace(/^0+/, "") };
}

describe("streaming delivery", () => {
  itStreams("user streams carry what entered the home feed, rendered for the viewer; other streams stay quiet", async () => {
    const [a, f, stranger] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    const fc = await ws({ token: f.token }, { stream: "user" });
    const sc = await ws({ token: stranger.token }, { stream: "user" });
    const priv = await insertStatus(a, { visibility: "private" });
    await fanOutAndPublish(priv);
    const m = await fc.next();
    expect(m.stream).toEqual(["user"]);
    expect(m.event).toBe("update");
    const s = payloadOf(m);
    expect(s.id).toBe(priv);
    expect(s.visibility).toBe("private");
    // Rendered for the follower, as the home timeline would: the viewer's fields are there.
    expect(s).toMatchObject({ favourited: false, reblogged: false, bookmarked: false, filtered: [] });
    // The stranger's own status reaches the stranger's stream; a's private status never did (it would be first).
    const own = await insertStatus(stranger);
    await fanOutAndPublish(own);
    expect(await nextUpdates(sc, 1)).toEqual([["user", own]]);
  });

  itStreams("a boost reaches the booster's followers' user streams, never the public streams", async () => {
    const [a, booster, f] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, booster);
    const fc = await ws({ token: f.token }, { stream: "user" });
    const pub = await ws(null, { stream: "public" });
    const orig = await insertStatus(a);
    await fanOutAndPublish(orig);
    const boost = await insertStatus(booster, { reblogOf: orig });
    await fanOutAndPublish(boost);
    const m = await fc.next();
    const s = payloadOf(m);
    expect(s.id).toBe(boost);
    expect(s.reblog.id).toBe(orig);
    expect(await nextUpdates(pub, 1)).toEqual([["public", orig]]);
    const after = await insertStatus(a);
    await fanOutAndPublish(after);
    expect(await nextUpdates(pub, 1)).toEqual([["public", after]]);
  });

  itStreams("public and hashtag streams follow the REST timelines' rules", async () => {
    const [a, other, silenced] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await env.DB.prepare("UPDATE accounts SET silenced_at = 1 WHERE id = ?").bind(pad(silenced.id)).run();
    const remote = await makeRemote("far", "remote.example");
    const c = await ws(null);
    for (const s of ["public", "public:local", "public:remote", "public:media", "public:local:media"]) c.subscribe(s);
    c.subscribe("hashtag", { tag: "Topic" });
    c.subscribe("hashtag:local", { tag: "topic" });
    await c.barrier();

    const ids: Record<string, string> = {};
    const post = async (key: string, author: { id: string }, o: Parameters<typeof insertStatus>[1] = {}, tag = false, media = false) => {
      const id = await insertStatus(author, o);
      if (tag) await addTag(id, "topic");
      if (media) await addMedia(id, author.id);
      ids[key] = id;
      await fanOutAndPublish(id);
      return id;
    };
    const otherStatus = await insertStatus(other);
    await post("unlisted", a, { visibility: "unlisted" }, true);
    await post("private", a, { visibility: "private" }, true);
    await post("replyToOther", a, { inReplyTo: { id: otherStatus, accountId: other.id } }, true);
    await post("silenced", silenced, {}, true);
    await post("selfReply", a, { inReplyTo: { id: otherStatus, accountId: a.id } });
    await post("remote", remote, { local: false }, true);
    await post("media", a, {}, false, true);
    await post("plain", a);

    expect(await nextUpdates(c, 2)).toEqual([
      ["hashtag Topic", ids.replyToOther],
      ["hashtag:local topic", ids.replyToOther],
    ]);
    expect(await nextUpdates(c, 2)).toEqual([
      ["public", ids.selfReply],
      ["public:local", ids.selfReply],
    ]);
    expect(await nextUpdates(c, 3)).toEqual([
      ["public", ids.remote],
      ["public:remote", ids.remote],
      ["hashtag Topic", ids.remote],
    ]);
    expect(await nextUpdates(c, 4)).toEqual([
      ["public", ids.media],
      ["public:local", ids.media],
      ["public:media", ids.media],
      ["public:local:media", ids.media],
    ]);
    expect(await nextUpdates(c, 2)).toEqual([
      ["public", ids.plain],
      ["public:local", ids.plain],
    ]);
    expect(c.pending).toBe(0);
  });

  itStreams("shared streams leave out what the viewer blocks, mutes, domain-blocks, is blocked by, or did not choose", async () => {
    const [v, blocked, blocker, muted, mentionedMuted, ok] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    const remote = await makeRemote("loud", "blocked.example");
    expect((await v.api.post(`/api/v1/accounts/${blocked.id}/block`)).status).toBe(200);
    expect((await blocker.api.post(`/api/v1/accounts/${v.id}/block`)).status).toBe(200);
    expect((await v.api.post(`/api/v1/accounts/${muted.id}/mute`)).status).toBe(200);
    expect((await v.api.post(`/api/v1/accounts/${mentionedMuted.id}/mute`)).status).toBe(200);
    expect((await v.api.post("/api/v1/domain_blocks", { domain: "blocked.example" })).status).toBe(200);
    const vc = await ws({ token: v.token }, { stream: "public" });
    const anonc = await ws(null, { stream: "public" });

    const hidden = [
      await insertStatus(blocked),
      await insertStatus(blocker),
      await insertStatus(muted),
      await insertStatus(ok, { mentions: [mentionedMuted.id] }),
      await insertStatus(remote, { local: false }),
    ];
    for (const id of hidden) await fanOutAndPublish(id);
    const shown = await insertStatus(ok);
    await fanOutAndPublish(shown);
    expect(await nextUpdates(vc, 1)).toEqual([["public", shown]]);
    // Signed out, everything public arrives.
    expect(await nextUpdates(anonc, hidden.length + 1)).toEqual([...hidden, shown].map((id) => ["public", id]));

    // Languages: with chosen languages, other (and unknown) languages stay out, as in REST.
    await env.DB.prepare(`UPDATE users SET chosen_languages = '["de"]' WHERE account_id = ?`).bind(pad(v.id)).run();
    await publishRelationsChanged(env, [v.id]);
    const en = await insertStatus(ok, { language: "en" });
    const none = await insertStatus(ok, { language: null });
    const de = await insertStatus(ok, { language: "de" });
    for (const id of [en, none, de]) await fanOutAndPublish(id);
    expect(await nextUpdates(vc, 1)).toEqual([["public", de]]);
  });

  itStreams("a block made while connected applies once the hub is told relations changed", async () => {
    const [v, x] = await Promise.all([makeUser(), makeUser()]);
    const vc = await ws({ token: v.token }, { stream: "public:local" });
    const first = await insertStatus(x);
    await fanOutAndPublish(first);
    expect(await nextUpdates(vc, 1)).toEqual([["public:local", first]]);
    expect((await v.api.post(`/api/v1/accounts/${x.id}/block`)).status).toBe(200);
    await publishRelationsChanged(env, [v.id]);
    await fanOutAndPublish(await insertStatus(x));
    const own = await insertStatus(v);
    await fanOutAndPublish(own);
    expect(await nextUpdates(vc, 1)).toEqual([["public:local", own]]);
  });

  itStreams("content filters: hide drops, warn marks `filtered`, and filters_changed reloads them", async () => {
    const [v, x] = await Promise.all([makeUser(), makeUser()]);
    await follow(v, x);
    const pc = await ws({ token: v.token }, { stream: "public" });
    const uc = await ws({ token: v.token }, { stream: "user" });
    const warmup = await insertStatus(x, { text: "hello" });
    await fanOutAndPublish(warmup);
    expect(await nextUpdates(pc, 1)).toEqual([["public", warmup]]);
    expect(await nextUpdates(uc, 1)).toEqual([["user", warmup]]);

    const hide = await v.api.post("/api/v2/filters", {
      title: "no spoilers",
      context: ["public", "home"],
      filter_action: "hide",
      keywords_attributes: [{ keyword: "spoiler" }],
    });
    expect(hide.status).toBe(200);
    const warn = await v.api.post("/api/v2/filters", { title: "cats", context: ["public"], filter_action: "warn", keywords_attributes: [{ keyword: "cat" }] });
    expect(warn.status).toBe(200);
    await publishToAccount(env, v.id, "filters_changed");
    expect(await uc.next()).toEqual({ stream: ["user"], event: "filters_changed" });

    const spoiler = await insertStatus(x, { text: "a spoiler here" });
    await fanOutAndPublish(spoiler);
    const cat = await insertStatus(x, { text: "my cat" });
    await fanOutAndPublish(cat);
    const m = await pc.next();
    expect(payloadOf(m).id).toBe(cat);
    expect(payloadOf(m).filtered).toEqual([
      { filter: expect.objectContaining({ id: warn.body.id, title: "cats", filter_action: "warn" }), keyword_matches: ["cat"], status_matches: null },
    ]);
    // The home stream hides the spoiler (home context) and shows the cat without a warning (public-only filter).
    const h = await uc.next();
    expect(payloadOf(h).id).toBe(cat);
    expect(payloadOf(h).filtered).toEqual([]);
  });

  itStreams("list streams carry what entered the list; a list is streamed only to its owner", async () => {
    const [owner, member] = await Promise.all([makeUser(), makeUser()]);
    await follow(owner, member);
    const list = (await owner.api.post("/api/v1/lists", { title: "close" })).body.id as string;
    expect((await owner.api.post(`/api/v1/lists/${list}/accounts`, { account_ids: [member.id] })).status).toBe(200);
    const c = await ws({ token: owner.token }, { stream: "list", list });
    const id = await insertStatus(member);
    await fanOutAndPublish(id);
    const m = await c.next();
    expect(m.stream).toEqual(["list", list]);
    expect(payloadOf(m).id).toBe(id);
  });

  itStreams("a direct status is a conversation event on the author's and the mentioned accounts' direct streams, nobody else's", async () => {
    const [a, m, f] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    const ac = await ws({ token: a.token }, { stream: "direct" });
    const mc = await ws({ token: m.token }, { stream: "direct" });
    const fc = await ws({ token: f.token });
    fc.subscribe("direct");
    await fc.sub("user");
    const dm = await insertStatus(a, { visibility: "direct", mentions: [m.id] });
    await fanOutAndPublish(dm);
    for (const [c, unread, other] of [
      [ac, false, m.id],
      [mc, true, a.id],
    ] as const) {
      const msg = await c.next();
      expect(msg.stream).toEqual(["direct"]);
      expect(msg.event).toBe("conversation");
      const conv = payloadOf(msg);
      expect(conv.last_status.id).toBe(dm);
      expect(conv.unread).toBe(unread);
      expect(conv.accounts.map((x: { id: string }) => x.id)).toEqual([other]);
    }
    // A public status reaches the follower's user stream but not the direct streams.
    const pub = await insertStatus(a);
    await fanOutAndPublish(pub);
    expect(await nextUpdates(fc, 1)).toEqual([["user", pub]]);
    await publishToAccount(env, m.id, "conversation", { id: "1", unread: true, accounts: [], last_status: null });
    expect(await mc.next()).toEqual({
      stream: ["direct"],
      event: "conversation",
      payload: JSON.stringify({ id: "1", unread: true, accounts: [], last_status: null }),
    });
  });

  itStreams("undoing a boost is a delete of the boost on the streams that showed it", async () => {
    const [author, booster, fan] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(fan, booster);
    const original = await insertStatus(author);
    const fc = await ws({ token: fan.token }, { stream: "user" });
    const boost = await booster.api.post(`/api/v1/statuses/${original}/reblog`);
    expect(boost.status).toBe(200);
    await runQueuedJobs();
    const shown = await fc.next();
    expect(shown.event).toBe("update");
    expect(payloadOf(shown)).toMatchObject({ id: boost.body.id, reblog: { id: original } });
    expect((await booster.api.post(`/api/v1/statuses/${original}/unreblog`)).status).toBe(200);
    await runQueuedJobs();
    expect(await fc.next()).toEqual({ stream: ["user"], event: "delete", payload: boost.body.id });
  });

  itStreams("notifications go to user:notification, and to user only for tokens that may read notifications", async () => {
    const [a, fan] = await Promise.all([makeUser(), makeUser()]);
    const statusesOnly = await makeUser(undefined, { scopes: "read:statuses write" });
    const full = await ws({ token: a.token }, { stream: "user" });
    const notes = await ws({ token: a.token }, { stream: "user:notification" });
    const { id, nid } = await favouritedBy(a, fan);
    await publishNotifications(db(), env, cfg(), [nid]);
    for (const [c, stream] of [
      [full, "user"],
      [notes, "user:notification"],
    ] as const) {
      const m = await c.next();
      expect(m.stream).toEqual([stream]);
      expect(m.event).toBe("notification");
      expect(payloadOf(m)).toMatchObject({ id: nid, type: "favourite", account: { id: fan.id }, status: { id, favourited: false } });
    }

    // read:statuses only: the user stream carries no notifications.
    const sc = await ws({ token: statusesOnly.token }, { stream: "user" });
    const id2 = await insertStatus(statusesOnly);
    expect((await fan.api.post(`/api/v1/statuses/${id2}/favourite`)).status).toBe(200);
    const row2 = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM notifications WHERE account_id = ?")
      .bind(pad(statusesOnly.id))
      .first<{ id: string }>();
    await publishNotifications(db(), env, cfg(), [row2!.id.replace(/^0+/, "")]);
    await publishToAccount(env, statusesOnly.id, "filters_changed");
    expect(await sc.next()).toEqual({ stream: ["user"], event: "filters_changed" });
  });

  itStreams("several notifications for one recipient: one read for all of them, each sent, oldest first", async () => {
    const [a, f1, f2, f3] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const notes = await ws({ token: a.token }, { stream: "user:notification" });
    const id = await insertStatus(a);
    for (const f of [f1, f2, f3]) expect((await f.api.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(200);
    const { results } = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM notifications WHERE account_id = ? ORDER BY id")
      .bind(pad(a.id))
      .all<{ id: string }>();
    const ids = results.map((r) => r.id.replace(/^0+/, ""));
    expect(ids).toHaveLength(3);
    const counter = { n: 0 };
    await publishNotifications(createDb(countingD1(env.DB, counter)), env, cfg(), [ids[2]!, ids[0]!, ids[1]!]);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(payloadOf(await notes.next()).id);
    expect(got).toEqual(ids);
    // The recipients, then the notifications with their senders: one round trip each, not one per notification.
    expect(counter.n).toBeLessThanOrEqual(3);
  });

  itStreams("a notify effect for one notification: read whole with its push targets, then its status, in two round trips", async () => {
    const [a, fan] = await Promise.all([makeUser(), makeUser()]);
    const notes = await ws({ token: a.token }, { stream: "user:notification" });
    const { id, nid } = await favouritedBy(a, fan);
    const counter = { n: 0 };
    await runJob(createDb(countingD1(env.DB, counter)), env, { type: "notify", notificationId: nid });
    const m = await notes.next();
    expect([m.stream, m.event]).toEqual([["user:notification"], "notification"]);
    expect(payloadOf(m)).toMatchObject({ id: nid, type: "favourite", account: { id: fan.id }, status: { id, favourited: false } });
    expect(counter.n).toBe(2);
  });

  itStreams("a notify effect leaves out a notification its recipient's mute hides, as the notifications page does", async () => {
    const [a, fan, other] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const notes = await ws({ token: a.token }, { stream: "user" });
    const id = await insertStatus(a);
    for (const f of [fan, other]) expect((await f.api.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(200);
    const { results } = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM notifications WHERE account_id = ? ORDER BY id")
      .bind(pad(a.id))
      .all<{ id: string }>();
    const [first, second] = results.map((r) => r.id.replace(/^0+/, ""));
    expect((await a.api.post(`/api/v1/accounts/${fan.id}/mute`)).status).toBe(200);
    await runJob(db(), env, {
      type: "effects",
      origin: ORIGIN,
      effects: [
        { type: "notify", notificationId: first! },
        { type: "notify", notificationId: second! },
      ],
    });
    const m = await notes.next();
    expect([m.stream, m.event]).toEqual([["user"], "notification"]);
    expect(payloadOf(m)).toMatchObject({ id: second, account: { id: other.id } });
    // Nothing else came: the next event on the socket is a later one.
    await publishToAccount(env, a.id, "filters_changed");
    expect(await notes.next()).toMatchObject({ event: "filters_changed" });
  });

  itStreams("a post's `status` notifications to followers who rang the bell reach each one's notification stream", async () => {
    const author = await makeUser();
    const fans = await Promise.all([makeUser(), makeUser(), makeUser()]);
    for (const f of fans) expect((await f.api.post(`/api/v1/accounts/${author.id}/follow`, { notify: true })).body.notifying).toBe(true);
    const sockets = await Promise.all(fans.map((f) => ws({ token: f.token }, { stream: "user:notification" })));
    await runQueuedJobs();
    const posted = await author.api.post("/api/v1/statuses", { status: "ring ring" });
    await runQueuedJobs();
    for (const c of sockets) {
      const m = await c.next();
      expect([m.stream, m.event]).toEqual([["user:notification"], "notification"]);
      expect(payloadOf(m)).toMatchObject({ type: "status", account: { id: author.id }, status: { id: posted.body.id } });
    }
  });

  itStreams("deletes reach the feeds that held the status and, for public ones, the public and hashtag streams", async () => {
    const [a, f, booster] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    await follow(f, booster);
    const fc = await ws({ token: f.token }, { stream: "user" });
    const pub = await ws(null);
    pub.subscribe("public");
    await pub.sub("hashtag", { tag: "gone" });
    const s = await insertStatus(a);
    await addTag(s, "gone");
    await fanOutAndPublish(s);
    const priv = await insertStatus(a, { visibility: "private" });
    await fanOutAndPublish(priv);
    expect(await nextUpdates(fc, 2)).toEqual([
      ["user", s],
      ["user", priv],
    ]);
    expect(await nextUpdates(pub, 2)).toEqual([
      ["public", s],
      ["hashtag gone", s],
    ]);

    // Deleting: read what the status was and who had it (before the rows go), then publish.
    for (const id of [priv, s]) {
      const info = await statusStreamInfo(db(), id);
      const removed = await unfanOut(db(), id);
      await publishDelete(env, id, removed, info);
    }
    expect(await fc.next()).toEqual({ stream: ["user"], event: "delete", payload: priv });
    expect(await fc.next()).toEqual({ stream: ["user"], event: "delete", payload: s });
    // The private status's deletion never reached the public streams.
    expect(await nextUpdates(pub, 2)).toEqual([
      ["public", `delete ${s}`],
      ["hashtag gone", `delete ${s}`],
    ]);
  });

  itStreams("edits reach the feeds holding the status and the public streams as status.update", async () => {
    const [a, f] = await Promise.all([makeUser(), makeUser()]);
    await follow(f, a);
    const fc = await ws({ token: f.token }, { stream: "user" });
    const pub = await ws(null, { stream: "public:local" });
    const post = await a.api.post("/api/v1/statuses", { status: "frist" });
    await fanOutAndPublish(post.body.id);
    await fc.next();
    await pub.next();
    expect((await a.api.put(`/api/v1/statuses/${post.body.id}`, { status: "first" })).status).toBe(200);
    await publishStatusUpdate(db(), env, cfg(), post.body.id);
    for (const [c, stream] of [
      [fc, "user"],
      [pub, "public:local"],
    ] as const) {
      const m: StreamMessage = await c.next();
      expect(m.stream).toEqual([stream]);
      expect(m.event).toBe("status.update");
      expect(payloadOf(m)).toMatchObject({ id: post.body.id, content: expect.stringContaining("first") });
      expect(payloadOf(m).edited_at).not.toBeNull();
    }
  });

  itStreams("a JOBS batch announces its statuses in order, and an edit in the same batch after its update", async () => {
    const [a, b, f] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    await follow(f, b);
    const fc = await ws({ token: f.token }, { stream: "user" });
    const pub = await ws(null, { stream: "public:local" });
    const s1: string = (await a.api.post("/api/v1/statuses", { status: "frist" })).body.id;
    const s2 = await insertStatus(b);
    const s3 = await insertStatus(a, { visibility: "private" });
    const batch = (bodies: JobMessage[]) => {
      const messages = bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body, ack() {}, retry() {} }));
      return { queue: "tern-jobs", messages, ackAll() {}, retryAll() {} } as unknown as MessageBatch<JobMessage>;
    };
    const fanout = (statusId: string): JobMessage => ({ type: "fanout", statusId });
    await handleJobs(batch([fanout(s1), fanout(s2), fanout(s3)]), env);
    expect(await nextUpdates(fc, 3)).toEqual([
      ["user", s1],
      ["user", s2],
      ["user", s3],
    ]);
    expect(await nextUpdates(pub, 2)).toEqual([
      ["public:local", s1],
      ["public:local", s2],
    ]);
    // An edit run in the same batch as a later fan-out still reaches the streams after that fan-out's update.
    const s4 = await insertStatus(a);
    expect((await a.api.put(`/api/v1/statuses/${s1}`, { status: "first" })).status).toBe(200);
    await handleJobs(batch([fanout(s4), { type: "status_updated", statusId: s1 }]), env);
    for (const [c, stream] of [
      [fc, "user"],
      [pub, "public:local"],
    ] as const) {
      const [u, e] = [await c.next(), await c.next()];
      expect([u.stream, u.event, payloadOf(u).id]).toEqual([[stream], "update", s4]);
      expect([e.stream, e.event, payloadOf(e).id]).toEqual([[stream], "status.update", s1]);
    }
  });

  itStreams("account and instance-wide events reach signed-in users' user streams only", async () => {
    const [a, b] = await Promise.all([makeUser(), makeUser()]);
    const ac = await ws({ token: a.token }, { stream: "user" });
    const bc = await ws({ token: b.token }, { stream: "user" });
    const anonc = await ws(null, { stream: "public" });
    await publishToAllUsers(env, "announcement", { id: "3", content: "<p>hi</p>" });
    for (const c of [ac, bc])
      expect(await c.next()).toEqual({ stream: ["user"], event: "announcement", payload: JSON.stringify({ id: "3", content: "<p>hi</p>" }) });
    await publishToAccount(env, a.id, "announcement.reaction", { name: "👍", count: 1, announcement_id: "3" });
    expect(payloadOf(await ac.next())).toEqual({ name: "👍", count: 1, announcement_id: "3" });
    const s = await insertStatus(a);
    await fanOutAndPublish(s);
    expect(await nextUpdates(anonc, 1)).toEqual([["public", s]]);
  });

  itStreams("costs nothing when nobody listens: no D1 read, and who listens follows connections", async () => {
    const a = await makeUser();
    const counter = { n: 0 };
    const counted = createDb(countingD1(env.DB, counter));
    const id = await insertStatus(a);
    const { fanOut } = await import("../../src/timelines/fanout");
    const { Effects } = await import("../../src/effects/collector");
    const r = await fanOut(db(), new Effects(ORIGIN), id, undefined);
    expect(r.homeAccountIds).toEqual([a.id]);
    // What this isolate last heard may be a listener of an earlier test: the first publish learns that nobody listens
    // (a plan made from a stale hint costs its reads once), and from then on nothing is read.
    await publishStatus(db(), env, cfg(), id, r);
    await publishStatus(counted, env, cfg(), id, r);
    await publishStatusUpdate(counted, env, cfg(), id);
    expect(counter.n).toBe(0);

    const router = routerStub(env);
    expect((await router.routerListening()).online).not.toContain(a.id);
    const c = await ws({ token: a.token }, { stream: "user" });
    expect((await router.routerListening()).online).toContain(a.id);
    await c.close();
    expect((await router.routerListening()).online).not.toContain(a.id);
  });

  itStreams("while someone listens a publish is one router call, and who connected since is heard", async () => {
    const [a, b] = await Promise.all([makeUser(), makeUser()]);
    const calls: string[] = [];
    const counted = countingRouterCalls(calls);
    const to = (...ids: string[]) => ({ homeAccountIds: ids, lists: [], shared: false });
    const ac = await ws({ token: a.token }, { stream: "user" });
    // The first publish may have to ask; from then on this isolate knows a listens.
    const s1 = await insertStatus(a);
    await publishStatus(db(), counted, cfg(), s1, to(a.id));
    const s2 = await insertStatus(a);
    calls.length = 0;
    await publishStatus(db(), counted, cfg(), s2, to(a.id));
    expect(calls).toEqual(["routerPublishIfCurrent"]);
    expect(await nextUpdates(ac, 2)).toEqual([
      ["user", s1],
      ["user", s2],
    ]);

    // b connects: the router's listeners changed, so the publish planned without b is refused and planned again.
    const bc = await ws({ token: b.token }, { stream: "user" });
    const s3 = await insertStatus(a);
    calls.length = 0;
    await publishStatus(db(), counted, cfg(), s3, to(a.id, b.id));
    expect(calls).toEqual(["routerPublishIfCurrent", "routerPublishIfCurrent"]);
    expect(await nextUpdates(bc, 1)).toEqual([["user", s3]]);
    expect(await nextUpdates(ac, 1)).toEqual([["user", s3]]);

    // An online account's own streams are matched when publishing: a subscribing to another of them changes nothing
    // a plan reads. A shared stream getting its first listener does.
    await ac.sub("user:notification");
    const s5 = await insertStatus(a);
    calls.length = 0;
    await publishStatus(db(), counted, cfg(), s5, to(a.id));
    expect(calls).toEqual(["routerPublishIfCurrent"]);
    expect(await nextUpdates(ac, 1)).toEqual([["user", s5]]);
    const anon = await ws(null, { stream: "public" });
    const s6 = await insertStatus(a);
    calls.length = 0;
    await publishStatus(db(), counted, cfg(), s6, { ...to(a.id), shared: true });
    expect(calls).toEqual(["routerPublishIfCurrent", "routerPublishIfCurrent"]);
    expect(await nextUpdates(anon, 1)).toEqual([["public", s6]]);
    expect(await nextUpdates(ac, 1)).toEqual([["user", s6]]);
    await anon.close();

    // Both gone: the next publish hears that nobody listens, and the one after asks once and reads nothing.
    await ac.close();
    await bc.close();
    const s4 = await insertStatus(a);
    calls.length = 0;
    await publishStatus(db(), counted, cfg(), s4, to(a.id, b.id));
    expect(calls).toEqual(["routerPublishIfCurrent"]);
    const { nid } = await favouritedBy(a, b);
    const counter = { n: 0 };
    calls.length = 0;
    await publishNotifications(createDb(countingD1(env.DB, counter)), counted, cfg(), [nid]);
    expect(calls).toEqual(["routerListening"]);
    expect(counter.n).toBe(1); // the notification's recipients, read before anyone is asked
  });

  itStreams("renderings read with a fan-out's writes serve its publish only for the listeners they were read for", async () => {
    const [a, f, g] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    await follow(f, a);
    await follow(g, a);
    const fc = await ws({ token: f.token }, { stream: "user" });
    // This isolate hears that f listens.
    const s0 = await insertStatus(a);
    await fanOutAndPublish(s0);
    expect(await nextUpdates(fc, 1)).toEqual([["user", s0]]);

    /** s's first fan-out chunk with its publish's reads at the end of its batch; the publish counted. */
    const fanOutReadAhead = async (s: string) => {
      const got: { ahead?: AheadParts } = {};
      const read = publishReadAhead(db(), cfg(), s, (x) => (got.ahead = x));
      expect(read).not.toBeNull();
      const delivered = await fanOut(db(), new Effects(ORIGIN), s, undefined, { ahead: read });
      expect(got.ahead).toBeDefined();
      return { statusId: s, delivered, cfg: cfg(), ahead: got.ahead };
    };
    const counted = async (items: Parameters<typeof publishStatuses>[2]) => {
      const counter = { n: 0 };
      await publishStatuses(createDb(countingD1(env.DB, counter)), env, items);
      return counter.n;
    };

    // g connects after the reads were made for f alone: the router refuses the plan, and the new one reads again.
    const s1 = await insertStatus(a);
    const p1 = await fanOutReadAhead(s1);
    const gc = await ws({ token: g.token }, { stream: "user" });
    expect(await counted([p1])).toBe(1);
    expect(await nextUpdates(fc, 1)).toEqual([["user", s1]]);
    expect(await nextUpdates(gc, 1)).toEqual([["user", s1]]);

    // Read for the listeners the publish plans for: no read of its own, and each viewer's rendering is the REST one.
    const s2 = await insertStatus(a);
    const p2 = await fanOutReadAhead(s2);
    expect(await counted([p2])).toBe(0);
    const m = await gc.next();
    expect(payloadOf(m)).toEqual((await g.api.get(`/api/v1/statuses/${s2}`)).body);
    expect(await nextUpdates(fc, 1)).toEqual([["user", s2]]);

    // Reads whose rendering failed: the publish reads as usual.
    const s3 = await insertStatus(a);
    const p3 = await fanOutReadAhead(s3);
    expect(await counted([{ ...p3, ahead: { ...p3.ahead!, parts: Promise.resolve(null) } }])).toBe(1);
    expect(await nextUpdates(fc, 1)).toEqual([["user", s3]]);
    expect(await nextUpdates(gc, 1)).toEqual([["user", s3]]);
  });
});
