// The streaming API's routes: health, where tokens are read, what is refused before upgrading and what is answered on
// the socket, event-stream framing, multiplexed subscribe/unsubscribe, and the instance's streaming URLs.
import { createExecutionContext, SELF, env } from "cloudflare:test";
import { buildApp } from "../../src/app";
import { issueToken } from "../../src/services/auth/tokens";
import { describe, expect } from "vitest";
import { publishToAccount } from "../../src/streaming/publish";
import { anon, api, db, makeApp, makeUser, ORIGIN } from "./helpers";
import { insertStatus } from "./feeds-fixtures";
import { connectWs, fanOutAndPublish, itStreams, payloadOf, sse, SseClient, ws, WsClient } from "./streaming-fixtures";

const notUpgraded = async (p: Promise<WsClient | Response>) => {
  const r = await p;
  if (r instanceof WsClient) throw new Error("upgraded");
  return { status: r.status, body: await r.json() };
};

describe("streaming routes", () => {
  itStreams("answers the health check, and a plain GET of /api/v1/streaming is a 404 (same host)", async () => {
    const h = await SELF.fetch(`${ORIGIN}/api/v1/streaming/health`);
    expect(h.status).toBe(200);
    expect(h.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await h.text()).toBe("OK");
    const plain = await anon.get("/api/v1/streaming");
    expect(plain.status).toBe(404);
    expect(plain.body).toEqual({ error: "Record not found" });
  });

  itStreams("takes the token from Authorization, access_token and Sec-WebSocket-Protocol (echoed in the 101)", async () => {
    const u = await makeUser();
    for (const via of ["header", "query", "protocol"] as const) {
      const c = await ws({ token: u.token, via }, { stream: "user" });
      expect(c.res.status).toBe(101);
      expect(c.res.headers.get("sec-websocket-protocol")).toBe(via === "protocol" ? u.token : null);
      await publishToAccount(env, u.id, "filters_changed");
      expect(await c.next()).toEqual({ stream: ["user"], event: "filters_changed" });
      c.close();
    }
  });

  itStreams("refuses a bad, revoked or suspended token with 401 before upgrading, whatever the stream", async () => {
    for (const via of ["header", "query", "protocol"] as const) {
      expect(await notUpgraded(connectWs({ token: "nope", via }, { stream: "public" }))).toEqual({ status: 401, body: { error: "Invalid access token" } });
    }
    const revoked = await makeUser();
    await env.DB.prepare("UPDATE oauth_access_tokens SET revoked_at = 1 WHERE user_id = ?").bind(revoked.userId.padStart(20, "0")).run();
    expect(await notUpgraded(connectWs({ token: revoked.token }))).toEqual({ status: 401, body: { error: "Invalid access token" } });
    const suspended = await makeUser();
    await env.DB.prepare("UPDATE accounts SET suspended_at = 1 WHERE id = ?").bind(suspended.id.padStart(20, "0")).run();
    expect(await notUpgraded(connectWs({ token: suspended.token }))).toEqual({ status: 401, body: { error: "Invalid access token" } });
    // Event streams say the same.
    const res = (await sse("public", { token: "nope", id: "0" })) as Response;
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "Invalid access token" });
  });

  itStreams("refuses a user stream without a token before upgrading; a signed-out socket may read public streams", async () => {
    expect(await notUpgraded(connectWs(null, { stream: "user" }))).toEqual({ status: 401, body: { error: "Missing access token" } });
    const r = (await sse("user")) as Response;
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: "Missing access token" });
    const c = await ws(null);
    c.subscribe("user");
    expect(await c.next()).toEqual({ error: "Missing access token", status: 401 });
    c.subscribe("direct");
    expect(await c.next()).toEqual({ error: "Missing access token", status: 401 });
    await c.sub("public:local");
    const author = await makeUser();
    const id = await insertStatus(author);
    await fanOutAndPublish(id);
    const m = await c.next();
    expect(m.stream).toEqual(["public:local"]);
    expect(m.event).toBe("update");
    const status = payloadOf(m);
    expect(status.id).toBe(id);
    // A signed-out rendering: no viewer fields.
    expect(status).not.toHaveProperty("favourited");
  });

  itStreams("an app token streams like a signed-out client; signed-out streaming follows the public-preview setting", async () => {
    const app = await makeApp();
    const t = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: null, scopes: ["read"], reuse: false });
    expect(await notUpgraded(connectWs({ token: t.accessToken }, { stream: "user" }))).toEqual({
      status: 401,
      body: { error: "This API requires an authenticated user" },
    });
    const c = await ws({ token: t.accessToken, via: "protocol" });
    c.subscribe("user");
    expect(await c.next()).toEqual({ error: "Missing access token", status: 401 });
    await c.sub("public");

    // PUBLIC_PREVIEW=false: nothing without a user.
    const worker = buildApp();
    const off = { ...env, PUBLIC_PREVIEW: "false" };
    const call = (path: string, headers: Record<string, string> = {}) =>
      worker.fetch(new Request(`${ORIGIN}${path}`, { headers }), off, createExecutionContext());
    for (const [path, headers, error] of [
      ["/api/v1/streaming", { upgrade: "websocket" }, "Missing access token"],
      ["/api/v1/streaming?stream=public", { upgrade: "websocket", "sec-websocket-protocol": t.accessToken }, "This API requires an authenticated user"],
      ["/api/v1/streaming/public", {}, "Missing access token"],
      ["/api/v1/streaming/hashtag/local?tag=x", { authorization: `Bearer ${t.accessToken}` }, "This API requires an authenticated user"],
    ] as const) {
      const res = await call(path, headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error });
    }
  });

  itStreams("checks scopes: user:notification needs read:notifications, the other user streams read:statuses, public none", async () => {
    const statusesOnly = await makeUser(undefined, { scopes: "read:statuses" });
    const notesOnly = await makeUser(undefined, { scopes: "read:notifications" });
    const writeOnly = await makeUser(undefined, { scopes: "write" });

    const a = await ws({ token: statusesOnly.token });
    a.subscribe("user:notification");
    expect(await a.next()).toEqual({ error: "Access token does not have the required scopes", status: 401 });
    await a.sub("user");

    const b = await ws({ token: notesOnly.token });
    for (const s of ["user", "direct"]) {
      b.subscribe(s);
      expect(await b.next()).toEqual({ error: "Access token does not have the required scopes", status: 401 });
    }
    await b.sub("user:notification");

    const w = await ws({ token: writeOnly.token });
    w.subscribe("list", { list: "1" });
    expect(await w.next()).toEqual({ error: "Access token does not have the required scopes", status: 401 });
    await w.sub("public");

    // Event streams: 401 with the same words.
    const refused = (await sse("user/notification", statusesOnly)) as Response;
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: "Access token does not have the required scopes" });
    const ok = await sse("user/notification", notesOnly);
    expect(ok).toBeInstanceOf(SseClient);
  });

  itStreams("answers unknown streams, missing parameters and other people's lists on the socket, as Mastodon does", async () => {
    const [u, other] = await Promise.all([makeUser(), makeUser()]);
    const theirs = (await other.api.post("/api/v1/lists", { title: "theirs" })).body.id as string;
    const c = await ws({ token: u.token }, { stream: "nonsense" });
    expect(await c.next()).toEqual({ error: "Unknown stream type", status: 400 });
    c.subscribe("hashtag");
    expect(await c.next()).toEqual({ error: "Missing tag name parameter", status: 400 });
    c.subscribe("list");
    expect(await c.next()).toEqual({ error: "Missing list name parameter", status: 400 });
    c.subscribe("list", { list: theirs });
    expect(await c.next()).toEqual({ error: "Not authorized to stream this list", status: 401 });
    c.subscribe("list", { list: "not-a-number" });
    expect(await c.next()).toEqual({ error: "Not authorized to stream this list", status: 401 });
    c.unsubscribe("nonsense");
    expect(await c.next()).toEqual({ error: "Error unsubscribing from channel" });
    // Garbage and unknown message types are ignored; the socket keeps working. "ping" is answered by the runtime.
    c.send("not json");
    c.send({ type: "dance" });
    await c.barrier();
    c.send("ping");
    expect(await c.next()).toBe("pong");
    // Too many subscriptions on one socket are refused.
    for (let i = 0; i < 24; i++) c.subscribe("hashtag", { tag: `t${i}` });
    c.subscribe("hashtag", { tag: "one_too_many" });
    expect(await c.next()).toEqual({ error: "Too many subscriptions", status: 400 });

    // Event streams: unknown channel 400, missing tag 400, someone else's list 401.
    for (const [path, status, error] of [
      ["nonsense", 400, "Unknown channel requested"],
      ["hashtag", 400, "Missing tag name parameter"],
      [`list?list=${theirs}`, 401, "Not authorized to stream this list"],
    ] as const) {
      const r = (await sse(path, u)) as Response;
      expect(r.status).toBe(status);
      expect(await r.json()).toEqual({ error });
    }
  });

  itStreams("multiplexes: several streams on one socket, each event tagged with its stream, unsubscribe stops one", async () => {
    const u = await makeUser();
    const list = (await u.api.post("/api/v1/lists", { title: "friends" })).body.id as string;
    const c = await ws({ token: u.token, via: "protocol" });
    c.subscribe("user");
    c.subscribe("hashtag", { tag: "CamelCase" });
    c.subscribe("list", { list });
    c.subscribe("user");
    await c.barrier();
    await publishToAccount(env, u.id, "announcement.delete", "7");
    expect(await c.next()).toEqual({ stream: ["user"], event: "announcement.delete", payload: "7" });

    // A hashtag status reaches hashtag:camelcase; the stream array echoes the tag as the client sent it.
    const post = await u.api.post("/api/v1/statuses", { status: "hello #camelcase" });
    expect(post.status).toBe(200);
    await fanOutAndPublish(post.body.id);
    const got = [await c.next(), await c.next()];
    expect(got.map((m) => m.stream).sort()).toEqual([["hashtag", "CamelCase"], ["user"]]);
    for (const m of got) expect(payloadOf(m).id).toBe(post.body.id);

    c.unsubscribe("user");
    await c.barrier();
    await publishToAccount(env, u.id, "announcement.delete", "8");
    const second = await u.api.post("/api/v1/statuses", { status: "again #CamelCase" });
    await fanOutAndPublish(second.body.id);
    const m = await c.next();
    expect(m.stream).toEqual(["hashtag", "CamelCase"]);
    expect(payloadOf(m).id).toBe(second.body.id);
    expect(c.pending).toBe(0);
  });

  itStreams("frames server-sent events with event:/data: lines after an opening comment", async () => {
    const u = await makeUser();
    const s = (await sse("user", u)) as SseClient;
    expect(s.res.headers.get("content-type")).toBe("text/event-stream");
    expect(s.res.headers.get("cache-control")).toBe("no-store");
    expect(await s.nextFrame()).toBe(":)\n");
    const id = await insertStatus(u);
    await fanOutAndPublish(id);
    const frame = await s.nextFrame();
    expect(frame).toMatch(/^event: update\ndata: \{.*\}\n\n$/);
    expect(JSON.parse(/^data: (.*)$/m.exec(frame)![1]).id).toBe(id);
    await publishToAccount(env, u.id, "filters_changed");
    expect(await s.nextFrame()).toBe("event: filters_changed\ndata: undefined\n\n");
  });

  itStreams("serves the :media variants and only_media on the public event streams", async () => {
    const u = await makeUser();
    const media = (await sse("public/local/media", u)) as SseClient;
    const viaParam = (await sse("public/local?only_media=true", u)) as SseClient;
    const plain = (await sse("public/local?only_media=false", u)) as SseClient;
    const text = await insertStatus(u);
    await fanOutAndPublish(text);
    const withMedia = await insertStatus(u);
    await env.DB.prepare(
      "INSERT INTO media_attachments (id, account_id, status_id, type, file_key, content_type, processing, created_at) VALUES (?, ?, ?, 'image', 'x', 'image/png', 0, ?)",
    )
      .bind(withMedia.padStart(20, "0"), u.id.padStart(20, "0"), withMedia.padStart(20, "0"), Date.now())
      .run();
    await fanOutAndPublish(withMedia);
    expect(JSON.parse((await plain.nextEvent()).data).id).toBe(text);
    expect(JSON.parse((await plain.nextEvent()).data).id).toBe(withMedia);
    expect(JSON.parse((await media.nextEvent()).data).id).toBe(withMedia);
    expect(JSON.parse((await viaParam.nextEvent()).data).id).toBe(withMedia);
  });

  itStreams("closes the sockets of a revoked token when asked, and on the hub's periodic token check", async () => {
    const { disconnectStreams } = await import("../../src/streaming/publish");
    const u = await makeUser();
    const c = await ws({ token: u.token }, { stream: "user" });
    await disconnectStreams(env, u.id);
    const ev = await c.closed;
    expect(ev.code).toBe(1000);

    // The periodic check: revoke in the database only, then run the hub's alarm.
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    const d = await ws({ token: u.token }, { stream: "user" });
    const keep = await makeUser();
    const k = await ws({ token: keep.token }, { stream: "user" });
    await env.DB.prepare("UPDATE oauth_access_tokens SET revoked_at = 1 WHERE user_id = ?").bind(u.userId.padStart(20, "0")).run();
    expect(await runDurableObjectAlarm(env.STREAMING.get(env.STREAMING.idFromName(`user:${u.id}`)))).toBe(true);
    expect((await d.closed).code).toBe(1000);
    expect(await runDurableObjectAlarm(env.STREAMING.get(env.STREAMING.idFromName(`user:${keep.id}`)))).toBe(true);
    await publishToAccount(env, keep.id, "filters_changed");
    expect(await k.next()).toEqual({ stream: ["user"], event: "filters_changed" });
  });

  itStreams("POST /oauth/revoke closes that token's sockets at once, not the account's other ones; staff suspension closes all", async () => {
    const { runQueuedJobs } = await import("./queues");
    const u = await makeUser();
    const app = await makeApp();
    const second = await issueToken(db(), env.SECRET_KEY_BASE ?? "", { applicationId: app.id, userId: u.userId, scopes: ["read"], reuse: false });
    const doomed = await ws({ token: second.accessToken }, { stream: "user" });
    const kept = await ws({ token: u.token }, { stream: "user" });
    const revoke = await SELF.fetch(`${ORIGIN}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, token: second.accessToken }),
    });
    expect(revoke.status).toBe(200);
    await runQueuedJobs();
    expect((await doomed.closed).code).toBe(1000);
    // The other token's socket still hears events.
    await publishToAccount(env, u.id, "filters_changed");
    expect(await kept.next()).toEqual({ stream: ["user"], event: "filters_changed" });

    const admin = await makeUser(undefined, { roleId: "2", scopes: "read write admin:read admin:write" });
    expect((await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "suspend" })).status).toBe(200);
    await runQueuedJobs();
    expect((await kept.closed).code).toBe(1000);
  });

  itStreams("advertises the streaming URL in both instance documents", async () => {
    const v2 = await anon.get("/api/v2/instance");
    expect(v2.body.configuration.urls.streaming).toBe("ws://tern.test");
    const v1 = await api().get("/api/v1/instance");
    expect(v1.body.urls.streaming_api).toBe("ws://tern.test");
  });
});
