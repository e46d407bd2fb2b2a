// Streaming rows of the security issue (docs/security-coverage.md, F5, F8, F9):
// - F5: sizes that meet a runtime limit are checked in bytes: a long non-Latin hashtag is a clear error on every path
//   (socket message, socket query, event stream), and a socket's attachment stays within the runtime's 2,048 bytes;
// - F8: subscription budgets are per connection and per owner (IP or account), not per hub; the router's stored keys
//   are bounded and follow what sockets hold; one IP holds only its share of the signed-out sockets;
// - F9: public and hashtag streams show a quote as REST shows it to the viewer (a quoted author who blocks the viewer:
//   `unauthorized`, no quoted status).
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect } from "vitest";
import { MAX_ANON_CONNECTIONS_PER_IP, MAX_CHANGES_PER_MINUTE } from "../../src/streaming/hub";
import { anonHubFor, ROUTER, userHub } from "../../src/streaming/protocol";
import { routerStub } from "../../src/streaming/router";
import { hubStub } from "../../src/streaming/streaming-do";
import { runtimeSize } from "../../src/streaming/streams";
import { makeUser, ORIGIN } from "./helpers";
import { insertStatus } from "./feeds-fixtures";
import { runQueuedJobs } from "./queues";
import { fanOutAndPublish, itStreams, payloadOf, sse, type StreamMessage, WsClient, ws } from "./streaming-fixtures";

const pad = (id: string) => id.padStart(20, "0");

async function addTag(statusId: string, name: string) {
  await env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, created_at) VALUES (?, ?, ?, ?)").bind(pad(statusId), name, name, Date.now()).run();
  await env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ?").bind(pad(statusId), name).run();
}

/** Sends a subscribe to an unknown stream and returns every message before its answer. */
async function untilBarrier(c: WsClient): Promise<StreamMessage[]> {
  c.send({ type: "subscribe", stream: "barrier" });
  const out: StreamMessage[] = [];
  for (;;) {
    const m = await c.next();
    if (m.error === "Unknown stream type") return out;
    out.push(m);
  }
}

/** A signed-out socket from `ip` (as the edge gives it in CF-Connecting-IP). */
async function wsFrom(ip: string, query: Record<string, string> = {}): Promise<WsClient | Response> {
  const q = new URLSearchParams(query).toString();
  const res = await SELF.fetch(`${ORIGIN}/api/v1/streaming${q ? `?${q}` : ""}`, { headers: { upgrade: "websocket", "cf-connecting-ip": ip } });
  if (res.status !== 101 || !res.webSocket) return res;
  return new WsClient(res.webSocket, res);
}

/** A signed-out socket from `ip` on one given anon hub (what the Worker hands the hub of that IP). */
async function anonSocket(hub: string, ip: string): Promise<WsClient> {
  const session = { hub, acct: null, tok: null, sc: 0, ip };
  const res = await hubStub(env, hub).fetch(
    new Request("https://streaming.internal/ws", { headers: { upgrade: "websocket", "x-tern-session": JSON.stringify(session) } }),
  );
  if (res.status !== 101 || !res.webSocket) throw new Error(`not upgraded: ${res.status} ${await res.text()}`);
  return new WsClient(res.webSocket, res);
}

/** Two IPs whose signed-out sockets share one anon hub. */
function ipsOnOneHub(): [string, string] {
  const seen = new Map<string, string>();
  for (let i = 1; ; i++) {
    const ip = `198.51.100.${i}`;
    const hub = anonHubFor(ip);
    const other = seen.get(hub);
    if (other) return [other, ip];
    seen.set(hub, ip);
  }
}

/** The keys the router stored for a hub. */
async function storedKeys(hub: string): Promise<string[] | null> {
  const stub = env.STREAMING.get(env.STREAMING.idFromName(ROUTER));
  return runInDurableObject(stub, async (_i: unknown, ctx: DurableObjectState) => (await ctx.storage.get<{ k: string[] }>(`hub:${hub}`))?.k ?? null);
}

/** Lowers the router's bounds on keys (its `limits`). */
async function routerLimits(l: Partial<{ hubKeys: number; routerKeys: number }>) {
  await routerStub(env).routerListening();
  const stub = env.STREAMING.get(env.STREAMING.idFromName(ROUTER));
  await runInDurableObject(stub, (instance: unknown) => {
    const r = (instance as { routerImpl: { limits?: Record<string, number> } | null }).routerImpl;
    if (r) r.limits = Object.assign(r.limits ?? {}, l);
  });
}

const FULL = { error: "Too many streams on this server, try again later", status: 503 };

describe("F5: sizes are checked in bytes", () => {
  const long = "日".repeat(300);

  itStreams("a long non-Latin hashtag is a clear error on a socket message, in the socket's query and on the event stream", async () => {
    const u = await makeUser();
    const c = await ws({ token: u.token });
    c.subscribe("hashtag", { tag: long });
    c.subscribe("hashtag:local", { tag: long });
    expect(await untilBarrier(c)).toEqual([
      { error: "Tag name too long", status: 400 },
      { error: "Tag name too long", status: 400 },
    ]);
    // The socket still works.
    await c.sub("hashtag", { tag: "日本" });

    for (const auth of [{ token: u.token }, null]) {
      const q = await ws(auth, { stream: "hashtag", tag: long });
      expect(await q.next()).toEqual({ error: "Tag name too long", status: 400 });
    }
    for (const user of [u, undefined]) {
      const res = (await sse(`hashtag?tag=${encodeURIComponent(long)}`, user)) as Response;
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "Tag name too long" });
    }
  });

  itStreams("long non-Latin tags fill a socket by bytes: refused with a clear error, the attachment within the runtime's limit", async () => {
    const u = await makeUser();
    const c = await ws({ token: u.token });
    // Valid tags of 100 characters (3 bytes each in UTF-8, 2 in the attachment's serialisation).
    const tags = [..."日月火水木金土本語字"].map((ch) => ch.repeat(100));
    for (const tag of tags) c.subscribe("hashtag", { tag });
    const answers = await untilBarrier(c);
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) expect(a).toEqual({ error: "Too many subscriptions", status: 400 });
    const stub = env.STREAMING.get(env.STREAMING.idFromName(userHub(u.id)));
    const sizes = await runInDurableObject(stub, (_i: unknown, ctx: DurableObjectState) =>
      ctx.getWebSockets().map((w) => runtimeSize(JSON.stringify(w.deserializeAttachment()))),
    );
    expect(sizes.length).toBe(1);
    expect(sizes[0]).toBeLessThanOrEqual(2048);
    // What was accepted works: the first tag's statuses arrive.
    const author = await makeUser();
    const id = await insertStatus(author);
    await addTag(id, tags[0]!);
    await fanOutAndPublish(id);
    const m = await c.next();
    expect([m.stream, payloadOf(m).id]).toEqual([["hashtag", tags[0]], id]);
  });
});

describe("F8: one client cannot block others' subscriptions or take the router's storage or every socket", () => {
  itStreams("a signed-out client flooding subscriptions is refused alone: another client on the same hub subscribes and receives", async () => {
    const hub = "anon:3";
    const flood = await anonSocket(hub, "198.51.100.1");
    // Subscribing and unsubscribing new tags: every message is a change of the hub's keys.
    for (let i = 0; i < MAX_CHANGES_PER_MINUTE + 5; i++) {
      flood.subscribe("hashtag", { tag: `flood${i}` });
      flood.unsubscribe("hashtag", { tag: `flood${i}` });
    }
    expect(await untilBarrier(flood)).toContainEqual({ error: "Too many requests", status: 429 });
    // A second socket of the same IP has its own budget, but shares the IP's: a third is refused at once.
    const flood2 = await anonSocket(hub, "198.51.100.1");
    for (let i = 0; i < MAX_CHANGES_PER_MINUTE / 2; i++) {
      flood2.subscribe("hashtag", { tag: `more${i}` });
      flood2.unsubscribe("hashtag", { tag: `more${i}` });
    }
    expect(await untilBarrier(flood2)).toEqual([]);
    const flood3 = await anonSocket(hub, "198.51.100.1");
    flood3.subscribe("hashtag", { tag: "again" });
    expect(await untilBarrier(flood3)).toEqual([{ error: "Too many requests", status: 429 }]);

    // Another client of the same hub subscribes as usual, and gets its events.
    const other = await anonSocket(hub, "198.51.100.2");
    other.subscribe("hashtag", { tag: "calm" });
    other.subscribe("public:remote");
    expect(await untilBarrier(other)).toEqual([]);
    const author = await makeUser();
    const id = await insertStatus(author);
    await addTag(id, "calm");
    await fanOutAndPublish(id);
    const m = await other.next();
    expect([m.stream, m.event, payloadOf(m).id]).toEqual([["hashtag", "calm"], "update", id]);
  });

  itStreams("the router stores only the keys sockets hold, and refuses past its bounds with a clear error", async () => {
    const u = await makeUser();
    const c = await ws({ token: u.token });
    for (let i = 0; i < 50; i++) {
      c.subscribe("hashtag", { tag: `passing${i}` });
      c.unsubscribe("hashtag", { tag: `passing${i}` });
    }
    for (let i = 0; i < 5; i++) c.subscribe("hashtag", { tag: `kept${i}` });
    expect(await untilBarrier(c)).toEqual([]);
    expect((await storedKeys(userHub(u.id)))?.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `hashtag:kept${i}`));

    // A hub's bound: beyond it, a new key is refused; keys the hub holds stay free to add on other sockets.
    await routerLimits({ hubKeys: 8 });
    for (let i = 5; i < 10; i++) c.subscribe("hashtag", { tag: `kept${i}` });
    expect(await untilBarrier(c)).toEqual([FULL, FULL]);
    const c2 = await ws({ token: u.token }, { stream: "hashtag", tag: "kept0" });
    expect(await untilBarrier(c2)).toEqual([]);
    expect(await storedKeys(userHub(u.id))).toHaveLength(8);
    // The refused subscription was undone: unsubscribing one key makes room for another.
    c.unsubscribe("hashtag", { tag: "kept1" });
    c.subscribe("hashtag", { tag: "kept9" });
    expect(await untilBarrier(c)).toEqual([]);
    expect((await storedKeys(userHub(u.id)))?.sort()).toContain("hashtag:kept9");

    // The router's bound over all hubs: another account's new key is refused (socket and event stream alike).
    await routerLimits({ hubKeys: 1000, routerKeys: 8 });
    const v = await makeUser();
    const d = await ws({ token: v.token });
    d.subscribe("hashtag", { tag: "kept0" });
    d.subscribe("hashtag", { tag: "elsewhere" });
    expect(await untilBarrier(d)).toEqual([FULL]);
    const s = (await sse("hashtag?tag=elsewhere", v)) as Response;
    expect(s.status).toBe(503);
    expect(await s.json()).toEqual({ error: FULL.error });
    expect(await storedKeys(userHub(v.id))).toEqual(["hashtag:kept0"]);
    expect((await routerStub(env).routerListening()).shared.length).toBeLessThanOrEqual(8);
  });

  itStreams("one IP holds at most its share of the signed-out sockets; other IPs still connect", async () => {
    const ip = "203.0.113.7";
    const mine: WsClient[] = [];
    for (let i = 0; i < MAX_ANON_CONNECTIONS_PER_IP; i++) {
      const c = await wsFrom(ip);
      if (!(c instanceof WsClient)) throw new Error(`socket ${i} refused: ${c.status}`);
      mine.push(c);
    }
    const refused = (await wsFrom(ip, { stream: "public" })) as Response;
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: "Too many connections" });
    const ev = await SELF.fetch(`${ORIGIN}/api/v1/streaming/public`, { headers: { "cf-connecting-ip": ip } });
    expect(ev.status).toBe(429);
    expect(await ev.json()).toEqual({ error: "Too many connections" });
    // Another IP, even one on the same hub, and the same IP once a socket closed.
    const [a, b] = ipsOnOneHub();
    expect(await wsFrom(a)).toBeInstanceOf(WsClient);
    expect(await wsFrom(b)).toBeInstanceOf(WsClient);
    await mine[0]!.close();
    expect(await wsFrom(ip)).toBeInstanceOf(WsClient);
  });
});

describe("F9: shared streams show a quote as REST shows it to the viewer", () => {
  itStreams("a quoted author who blocks the viewer: public and hashtag streams hide the quoted status as GET /statuses/:id does", async () => {
    const [a, b, v, w, x] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    const orig = (await a.api.post("/api/v1/statuses", { status: "the original", quote_approval_policy: "public" })).body;
    expect((await a.api.post(`/api/v1/accounts/${v.id}/block`)).status).toBe(200);
    expect((await x.api.post(`/api/v1/accounts/${a.id}/block`)).status).toBe(200);
    await runQueuedJobs();
    // v is blocked by the quoted author, x blocks them, w neither.
    const socks = await Promise.all([v, x, w].map((u) => ws({ token: u.token })));
    for (const c of socks) {
      c.subscribe("public");
      await c.sub("hashtag", { tag: "quoting" });
    }
    const q = await b.api.post("/api/v1/statuses", { status: "look #quoting", quoted_status_id: orig.id });
    expect(q.status).toBe(200);
    expect(q.body.quote.state).toBe("accepted");
    await runQueuedJobs();

    for (const [u, c] of [
      [v, socks[0]!],
      [x, socks[1]!],
      [w, socks[2]!],
    ] as const) {
      const rest = (await u.api.get(`/api/v1/statuses/${q.body.id}`)).body;
      for (const stream of [["public"], ["hashtag", "quoting"]]) {
        const m = await c.next();
        expect(m.stream).toEqual(stream);
        const p = payloadOf(m);
        expect(p.id).toBe(q.body.id);
        expect(p.quote.state).toBe(rest.quote.state);
        expect(p.quote.quoted_status?.id ?? null).toBe(rest.quote.quoted_status?.id ?? null);
      }
      if (u === v) expect(rest.quote).toEqual({ state: "unauthorized", quoted_status: null });
      if (u === x) expect(rest.quote.state).toBe("blocked_account");
      if (u === w) expect(rest.quote.quoted_status.id).toBe(orig.id);
    }
  });
});
