// End to end: the streaming API as clients use it, against `wrangler dev`. masto 8's streaming client (what Elk and
// Phanpy use) over a real WebSocket, plain `ws` sockets for the token placements and refusals, and the server-sent
// event path read with fetch. Every wait is on an event (a socket message, an SSE event) with a generous cap.
//
// Knowing when a subscription is live: masto sends `{"type":"subscribe"}` and the server does not acknowledge it. The
// hub handles a socket's messages one after another, so after masto's subscribe the test sends a subscribe to an
// unknown stream on the same socket; the server's answer (`Unknown stream type`) comes once the subscription before it
// is in place. The socket class handed to masto swallows those answers (masto would throw on any `error` message).
//
// Proving that something did NOT arrive: events reach one socket in order, and the events of one publish reach every
// hub before those of a later publish. So the test waits until the unwanted event has certainly been published (it is
// seen on another socket, or it travels in the same delivery as an event that is seen), then for a later event on the
// socket under test; anything the first could have produced would have come before it.
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { after, before, describe, test } from "node:test";
import { createOAuthAPIClient, createRestAPIClient, createStreamingAPIClient } from "masto";
import WebSocket from "ws";
import { startTern } from "../support/server.mjs";

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write follow push";
const PASSWORD = "correct horse battery staple";
/** Cap of every wait: the machine is shared and busy. */
const WAIT_MS = 30_000;
const BARRIER_STREAM = "tern:e2e:barrier";
const BARRIER_ERROR = "Unknown stream type";

const nonce = () => Math.random().toString(36).slice(2, 9);

/** Makes masto's HTTP errors say which request failed and how. */
async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e?.statusCode) throw new Error(`${what}: HTTP ${e.statusCode} ${JSON.stringify(e.message)}`, { cause: e });
    throw e;
  }
}

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

function withTimeout(promise, what, ms = WAIT_MS) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const brief = (x) => {
  const text = typeof x === "string" ? x : JSON.stringify(x);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
};

/** Things received in order (socket messages, stream events), with waits on what is there or still to come. */
class Inbox {
  items = [];
  ended = null;
  #ee = new EventEmitter();

  push(x) {
    this.items.push(x);
    this.#ee.emit("item");
  }

  end(why) {
    if (this.ended) return;
    this.ended = why;
    this.#ee.emit("item");
  }

  /** The first item (with its index) matching `pred`, now or once it arrives; fails when the source ends first. */
  waitFor(pred, what, ms = WAIT_MS) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const i = this.items.findIndex((x, j) => pred(x, j));
        if (i >= 0) {
          done();
          resolve(this.items[i]);
        } else if (this.ended) {
          done();
          reject(new Error(`${what}: ended (${this.ended}) after ${this.items.length} items: ${this.items.map(brief).join(" | ")}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what}: nothing within ${ms} ms; ${this.items.length} items: ${this.items.map(brief).join(" | ")}`));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.#ee.off("item", check);
      };
      this.#ee.on("item", check);
      check();
    });
  }

  some(pred) {
    return this.items.some(pred);
  }

  /** Resolves with the reason once the source has ended. */
  whenEnded(what, ms = WAIT_MS) {
    return this.waitFor(() => false, what, ms).then(
      () => this.ended,
      (e) => {
        if (this.ended) return this.ended;
        throw e;
      },
    );
  }
}

const parse = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * A `ws` WebSocket class for masto's `implementation` option: records what is sent and received, and answers
 * `barrier()` (see the header). One class per masto client, so the test can find that client's socket.
 */
function tracedSocketClass() {
  const sockets = new Inbox();
  class TracedSocket extends WebSocket {
    sent = new Inbox();
    received = new Inbox();
    #barriers = [];

    constructor(...args) {
      super(...args);
      sockets.push(this);
    }

    send(data, ...rest) {
      super.send(data, ...rest);
      this.sent.push(parse(String(data)));
    }

    emit(type, ...args) {
      if (type === "message" && !args[1]) {
        const msg = parse(args[0].toString());
        if (msg?.error === BARRIER_ERROR && this.#barriers.length) {
          this.#barriers.shift().resolve();
          return true;
        }
        this.received.push(msg);
      } else if (type === "error") {
        this.error = args[0];
      } else if (type === "close") {
        const why = `socket closed (${args[0]}${this.error ? `, ${this.error.message}` : ""})`;
        this.received.end(why);
        this.sent.end(why);
        for (const b of this.#barriers.splice(0)) b.reject(new Error(why));
      }
      return super.emit(type, ...args);
    }

    /** Resolves once the server has handled every message sent on this socket before it. */
    barrier(what) {
      const d = Promise.withResolvers();
      this.#barriers.push(d);
      this.send(JSON.stringify({ type: "subscribe", stream: BARRIER_STREAM }));
      return withTimeout(d.promise, `barrier after ${what}`);
    }
  }
  return { Impl: TracedSocket, sockets };
}

describe("Streaming API as clients use it (masto 8, ws, SSE against wrangler dev)", () => {
  let server;
  const s = {}; // shared state between steps
  const streamingClients = [];
  const rawSockets = [];
  const sseStreams = [];

  const rest = (accessToken) => createRestAPIClient({ url: server.url, accessToken, timeout: 20_000 });

  /** A masto streaming client; `socket()` resolves with its (traced) WebSocket. */
  function streaming(accessToken, extra = {}) {
    const traced = tracedSocketClass();
    const client = createStreamingAPIClient({
      streamingApiUrl: need(s.streamingUrl, "configuration.urls.streaming"),
      accessToken,
      implementation: traced.Impl,
      retry: false,
      ...extra,
    });
    streamingClients.push(client);
    return { client, socket: () => traced.sockets.waitFor(() => true, "masto opens its WebSocket") };
  }

  /**
   * Iterates a masto subscription in the background into an Inbox of events; resolves once the server has the
   * subscription in place (`barrier: false` for subscriptions the server refuses).
   */
  async function listen(sc, subscription, stream, params = {}, { barrier = true } = {}) {
    const events = new Inbox();
    (async () => {
      try {
        for await (const e of subscription) events.push(e);
        events.end("iteration finished");
      } catch (e) {
        events.error = e;
        events.end(`masto threw: ${e?.message}`);
      }
    })();
    const sock = await sc.socket();
    await sock.sent.waitFor(
      (m) => m?.type === "subscribe" && m.stream === stream && Object.entries(params).every(([k, v]) => m[k] === v),
      `masto sends subscribe ${stream}`,
    );
    if (barrier) await sock.barrier(`subscribe ${stream}`);
    return { events, subscription, sock };
  }

  /** A plain `ws` socket, open; rejects with `status` and `body` when the upgrade is refused. */
  function openRaw(path, protocols) {
    const ws = new WebSocket(`${s.streamingUrl}${path}`, protocols);
    rawSockets.push(ws);
    const messages = new Inbox();
    ws.on("message", (data) => messages.push(parse(data.toString())));
    ws.on("close", (code) => messages.end(`closed ${code}`));
    return withTimeout(
      new Promise((resolve, reject) => {
        ws.on("error", reject);
        ws.once("open", () => resolve({ ws, messages }));
        ws.once("unexpected-response", (_req, res) => {
          let body = "";
          res.on("data", (c) => {
            body += c;
          });
          res.on("end", () => {
            reject(Object.assign(new Error(`upgrade refused: HTTP ${res.statusCode} ${body}`), { status: res.statusCode, body: parse(body) }));
            ws.terminate();
          });
        });
      }),
      `open ${path}`,
    );
  }

  /** GET an SSE path; `events` gets {event, data} for each event (comments and heartbeats skipped). */
  async function openSse(path, token) {
    const ac = new AbortController();
    sseStreams.push(ac);
    const res = await fetch(`${server.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: ac.signal });
    const events = new Inbox();
    if (res.ok) {
      (async () => {
        const dec = new TextDecoder();
        let buf = "";
        try {
          for await (const chunk of res.body) {
            buf += dec.decode(chunk, { stream: true });
            for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              let event = null;
              const data = [];
              for (const line of block.split("\n")) {
                if (line.startsWith("event:")) event = line.slice(6).trim();
                else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
              }
              if (event) events.push({ event, data: data.join("\n") });
            }
          }
        } catch {}
        events.end("event stream closed");
      })();
    }
    return { res, events, close: () => ac.abort() };
  }

  async function signUp(appClient, who) {
    const username = `st_${who}_${nonce().slice(0, 5)}`;
    const email = `${username}@example.test`;
    const token = await step(`POST /api/v1/accounts (${who})`, () =>
      appClient.v1.accounts.create({ username, email, password: PASSWORD, agreement: true, locale: "en" }),
    );
    const client = rest(token.accessToken);
    const me = await step(`verify_credentials (${who})`, () => client.v1.accounts.verifyCredentials());
    return { username, email, token: token.accessToken, client, id: me.id };
  }

  const post = (u, status, extra = {}) => step(`POST /api/v1/statuses (${status.slice(0, 30)})`, () => u.client.v1.statuses.create({ status, ...extra }));

  const isUpdateOf = (id) => (e) => e.event === "update" && e.payload?.id === id;

  before(async () => {
    server = await startTern();
    const anon = rest();
    const inst = await step("GET /api/v2/instance", () => anon.v2.instance.fetch());
    s.instance = inst;
    s.streamingUrl = inst.configuration?.urls?.streaming;
    const app = await step("POST /api/v1/apps", () => anon.v1.apps.create({ clientName: "Tern streaming e2e", redirectUris: OOB, scopes: SCOPES }));
    s.app = app;
    const oauth = createOAuthAPIClient({ url: server.url, timeout: 20_000 });
    s.oauth = oauth;
    const appToken = await step("POST /oauth/token (client_credentials)", () =>
      oauth.token.create({ grantType: "client_credentials", clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: OOB, scope: SCOPES }),
    );
    const appClient = rest(appToken.accessToken);
    for (const who of ["a", "b", "c", "d"]) s[who] = await signUp(appClient, who);
    await step("A follows B", () => s.a.client.v1.accounts.$select(s.b.id).follow());
  });

  after(async () => {
    for (const c of streamingClients) c.close();
    for (const ws of rawSockets) ws.terminate();
    for (const ac of sseStreams) ac.abort();
    await server?.stop();
  });

  test("the instance advertises its streaming URL; /api/v1/streaming/health answers OK", async () => {
    assert.equal(s.streamingUrl, server.url.replace(/^http/, "ws"), "configuration.urls.streaming is this origin over ws:");
    const v1 = await rest().v1.instance.fetch();
    assert.equal(v1.urls?.streamingApi, s.streamingUrl, "urls.streaming_api (v1)");
    const res = await fetch(`${server.url}/api/v1/streaming/health`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "OK");
  });

  test("user stream (masto, token in Sec-WebSocket-Protocol, echoed): B's new post reaches A as `update`", async () => {
    const { a, b } = s;
    const sc = streaming(a.token);
    const user = await listen(sc, sc.client.user.subscribe(), "user");
    assert.equal(user.sock.protocol, a.token, "the server echoes the offered subprotocol (browsers drop the socket otherwise)");
    assert.ok(!user.sock.url.includes("access_token"), "masto keeps the token out of the URL");
    const st = await post(b, `Hello A, live ${nonce()}`, { visibility: "public" });
    const ev = await user.events.waitFor(isUpdateOf(st.id), "A's user stream: update with B's post");
    assert.deepEqual(ev.stream, ["user"]);
    assert.equal(ev.payload.account.id, b.id);
    assert.equal(ev.payload.content, st.content);
    assert.equal(ev.payload.visibility, "public");
    s.aStream = sc;
    s.aUser = user;
  });

  test("notifications arrive as `notification` on `user` and on `user:notification`", async () => {
    const { a, b } = s;
    const sc = need(s.aStream, "A's user stream");
    const user = s.aUser;
    const notes = await listen(sc, sc.client.user.notification.subscribe(), "user:notification");
    const st = await post(b, `@${a.username} are you there? ${nonce()}`, { visibility: "public" });
    const isMention = (e) => e.event === "notification" && e.payload?.type === "mention" && e.payload.status?.id === st.id;
    const onUser = await user.events.waitFor(isMention, "mention notification on `user`");
    const onNotes = await notes.events.waitFor(isMention, "mention notification on `user:notification`");
    assert.deepEqual(onUser.stream, ["user"]);
    assert.deepEqual(onNotes.stream, ["user:notification"]);
    assert.equal(onUser.payload.id, onNotes.payload.id, "one notification, on both streams");
    assert.equal(onUser.payload.account.id, b.id);
    assert.match(onUser.payload.id, /^\d+$/);
    const listed = await a.client.v1.notifications.list({ limit: 10 });
    assert.ok(
      listed.some((n) => n.id === onUser.payload.id),
      "the streamed notification is the one REST lists",
    );
    // A mention from someone A follows is also a status of A's home timeline.
    await user.events.waitFor(isUpdateOf(st.id), "the mention as `update` on `user`");
    assert.ok(!notes.events.some((e) => e.event === "update"), "`user:notification` carries notifications only");
  });

  test("a deleted status arrives as `delete` with its id as a string", async () => {
    const { b } = s;
    const user = need(s.aUser, "A's user stream");
    const st = await post(b, `Soon gone ${nonce()}`, { visibility: "public" });
    await user.events.waitFor(isUpdateOf(st.id), "update before the delete");
    await step("DELETE /api/v1/statuses/:id", () => b.client.v1.statuses.$select(st.id).remove());
    const ev = await user.events.waitFor((e) => e.event === "delete" && e.payload === st.id, "`delete` on A's user stream");
    assert.deepEqual(ev.stream, ["user"]);
    const raw = await user.sock.received.waitFor((m) => m?.event === "delete" && m.payload === st.id, "raw delete message");
    assert.equal(typeof raw.payload, "string", "the payload is the id itself, a string (not JSON-encoded again, not a number)");
  });

  test("an edited status arrives as `status.update`", async () => {
    const { b } = s;
    const user = need(s.aUser, "A's user stream");
    const st = await post(b, `First draft ${nonce()}`, { visibility: "public" });
    await user.events.waitFor(isUpdateOf(st.id), "update before the edit");
    const edited = await step("PUT /api/v1/statuses/:id", () => b.client.v1.statuses.$select(st.id).update({ status: `Second draft ${nonce()}` }));
    const ev = await user.events.waitFor((e) => e.event === "status.update" && e.payload?.id === st.id, "`status.update` on A's user stream");
    assert.deepEqual(ev.stream, ["user"]);
    assert.equal(ev.payload.content, edited.content, "the edited text");
    assert.ok(ev.payload.editedAt, "edited_at is set");
  });

  test("one socket, several streams (public:local, hashtag, list): each event names its stream; unsubscribe stops one", async () => {
    const { a, b } = s;
    const list = await step("POST /api/v1/lists", () => a.client.v1.lists.create({ title: "Friends (e2e)" }));
    await step("POST /api/v1/lists/:id/accounts", () => a.client.v1.lists.$select(list.id).accounts.create({ accountIds: [b.id] }));
    const tag = `TernMux${nonce().slice(0, 4)}`; // subscribed in mixed case, posted in lower case
    const sc = streaming(a.token);
    const local = await listen(sc, sc.client.public.local.subscribe(), "public:local");
    const hashtag = await listen(sc, sc.client.hashtag.subscribe({ tag }), "hashtag", { tag });
    const listed = await listen(sc, sc.client.list.subscribe({ list: list.id }), "list", { list: list.id });
    const sock = local.sock;
    assert.equal(hashtag.sock, sock, "masto multiplexes its subscriptions over one socket");
    assert.equal(listed.sock, sock);

    const one = await post(b, `First #${tag.toLowerCase()} ${nonce()}`, { visibility: "public" });
    const expected = [["public:local"], ["hashtag", tag], ["list", list.id]];
    for (const stream of expected) {
      await sock.received.waitFor(
        (m) => m?.event === "update" && JSON.stringify(m.stream) === JSON.stringify(stream) && JSON.parse(m.payload).id === one.id,
        `update tagged ${JSON.stringify(stream)}`,
      );
    }
    const updatesOfOne = sock.received.items.filter((m) => m?.event === "update" && JSON.parse(m.payload).id === one.id);
    assert.equal(updatesOfOne.length, 3, "one event per subscribed stream");
    await local.events.waitFor(isUpdateOf(one.id), "masto's public:local subscription yields it");
    await hashtag.events.waitFor(isUpdateOf(one.id), "masto's hashtag subscription yields it");
    await listed.events.waitFor(isUpdateOf(one.id), "masto's list subscription yields it");

    hashtag.subscription.unsubscribe();
    await sock.sent.waitFor((m) => m?.type === "unsubscribe" && m.stream === "hashtag" && m.tag === tag, "masto sends unsubscribe");
    await sock.barrier("unsubscribe hashtag");
    const two = await post(b, `Second #${tag.toLowerCase()} ${nonce()}`, { visibility: "public" });
    await listed.events.waitFor(isUpdateOf(two.id), "the second tagged post on `list`");
    await local.events.waitFor(isUpdateOf(two.id), "the second tagged post on `public:local`");
    // A later publish reaches the socket after everything of the second post's publish.
    const three = await post(b, `Third, untagged ${nonce()}`, { visibility: "public" });
    await local.events.waitFor(isUpdateOf(three.id), "a later post on `public:local`");
    assert.ok(
      !sock.received.some((m) => m?.stream?.[0] === "hashtag" && m.event === "update" && JSON.parse(m.payload).id === two.id),
      "no hashtag event after unsubscribing",
    );
    s.list = list;
  });

  test("the token as `access_token` in the query and in Sec-WebSocket-Protocol (plain ws), and bad or missing tokens", async () => {
    const { a, b } = s;
    const q = await openRaw(`/api/v1/streaming?stream=user&access_token=${encodeURIComponent(a.token)}`);
    assert.equal(q.ws.protocol, "", "no subprotocol offered, none chosen");
    const p = await openRaw("/api/v1/streaming?stream=user", [a.token]);
    assert.equal(p.ws.protocol, a.token, "Sec-WebSocket-Protocol is echoed in the 101");
    const sc = streaming(a.token, { useInsecureAccessToken: true });
    const insecure = await listen(sc, sc.client.user.subscribe(), "user");
    assert.match(insecure.sock.url, /[?&]access_token=/, "masto's useInsecureAccessToken puts the token in the query");
    assert.equal(insecure.sock.protocol, "");

    // A stream given in the query is subscribed before the 101: no barrier needed for the plain sockets.
    const st = await post(b, `To every socket ${nonce()}`, { visibility: "public" });
    for (const [name, inbox] of [
      ["query token", q.messages],
      ["protocol token", p.messages],
    ]) {
      const m = await inbox.waitFor((x) => x?.event === "update" && JSON.parse(x.payload).id === st.id, `update on the ${name} socket`);
      assert.deepEqual(m.stream, ["user"]);
    }
    await insecure.events.waitFor(isUpdateOf(st.id), "update on masto's query-token socket");

    await assert.rejects(openRaw("/api/v1/streaming?stream=user&access_token=not-a-token"), (e) => {
      assert.equal(e.status, 401);
      assert.deepEqual(e.body, { error: "Invalid access token" });
      return true;
    });
    await assert.rejects(openRaw("/api/v1/streaming?stream=user", ["not-a-token"]), (e) => e.status === 401);
    await assert.rejects(openRaw("/api/v1/streaming?stream=user"), (e) => {
      assert.equal(e.status, 401);
      assert.deepEqual(e.body, { error: "Missing access token" });
      return true;
    });
  });

  test("signed out (public preview on, the default): public streams are open, user streams are not", async () => {
    const { b } = s;
    assert.equal(s.instance.configuration?.timelinesAccess?.liveFeeds?.local, "public", "the instance says live feeds are public");
    const anon = await openRaw("/api/v1/streaming?stream=public:local");
    const sc = streaming(undefined);
    const local = await listen(sc, sc.client.public.local.subscribe(), "public:local");
    const st = await post(b, `For everyone ${nonce()}`, { visibility: "public" });
    await anon.messages.waitFor((m) => m?.event === "update" && JSON.parse(m.payload).id === st.id, "signed-out ws gets the public post");
    const ev = await local.events.waitFor(isUpdateOf(st.id), "signed-out masto gets the public post");
    assert.ok(!("favourited" in ev.payload), "rendered for nobody, as Mastodon renders public streams (no viewer flags)");
    const sse = await openSse("/api/v1/streaming/public/local");
    assert.equal(sse.res.status, 200, "signed-out SSE on a public stream");
    sse.close();
    const refused = await openSse("/api/v1/streaming/user");
    assert.equal(refused.res.status, 401);
    assert.deepEqual(await refused.res.json(), { error: "Missing access token" });
    s.anon = anon; // an observer for the rules below
  });

  test.skip(
    "public preview off: signed-out streaming refused (PUBLIC_PREVIEW is a deployment variable, not an instance setting: it needs a second wrangler dev; test/integration/streaming.test.ts covers it)",
  );

  test("a token without a read scope: user streams refused (error on the socket, 401 for SSE); public streams need none", async () => {
    const { a, b } = s;
    const grant = await step("POST /oauth/token (password, scope write)", () =>
      s.oauth.token.create({
        grantType: "password",
        clientId: s.app.clientId,
        clientSecret: s.app.clientSecret,
        username: a.email,
        password: PASSWORD,
        scope: "write",
      }),
    );
    assert.equal(grant.scope, "write");
    const w = grant.accessToken;
    const refusal = { error: "Access token does not have the required scopes", status: 401 };

    const raw = await openRaw(`/api/v1/streaming?stream=user&access_token=${encodeURIComponent(w)}`);
    assert.deepEqual(await raw.messages.waitFor(() => true, "the refusal on the socket"), refusal);
    raw.ws.send(JSON.stringify({ type: "subscribe", stream: "user:notification" }));
    assert.deepEqual(await raw.messages.waitFor((_, i) => i === 1, "refusal of a subscribe message"), refusal);

    const sc = streaming(w);
    const user = await listen(sc, sc.client.user.subscribe(), "user", {}, { barrier: false });
    await user.events.whenEnded("masto ends the refused subscription");
    assert.match(String(user.events.error?.message), /does not have the required scopes/, "masto throws the server's error");

    const sse = await openSse("/api/v1/streaming/user", w);
    assert.equal(sse.res.status, 401);
    assert.deepEqual(await sse.res.json(), { error: "Access token does not have the required scopes" });

    const pub = await openRaw(`/api/v1/streaming?stream=public:local&access_token=${encodeURIComponent(w)}`);
    const st = await post(b, `Public, no scope needed ${nonce()}`, { visibility: "public" });
    await pub.messages.waitFor((m) => m?.event === "update" && JSON.parse(m.payload).id === st.id, "public:local with a write-only token");
    assert.ok(!pub.messages.some((m) => m?.error), "no refusal for a public stream");
  });

  test("a blocked account's posts do not reach the blocker's public stream", async () => {
    const { b, c, d } = s;
    const observer = need(s.anon, "the signed-out observer");
    await step("D blocks C", () => d.client.v1.accounts.$select(c.id).block());
    const sc = streaming(d.token);
    const local = await listen(sc, sc.client.public.local.subscribe(), "public:local");
    const fromC = await post(c, `C speaks ${nonce()}`, { visibility: "public" });
    await observer.messages.waitFor((m) => m?.event === "update" && JSON.parse(m.payload).id === fromC.id, "C's post is published (seen signed out)");
    const fromB = await post(b, `B speaks ${nonce()}`, { visibility: "public" });
    await local.events.waitFor(isUpdateOf(fromB.id), "a later post reaches D");
    assert.ok(!local.events.some(isUpdateOf(fromC.id)), "C's post never reached D, who blocks C");
    s.dLocal = local;
  });

  test("filters: a `hide` filter drops the event, a `warn` filter delivers it with `filtered`", async () => {
    const { a, b } = s;
    const sc = need(s.aStream, "A's user stream");
    const user = s.aUser;
    const local = await listen(sc, sc.client.public.local.subscribe(), "public:local");
    const observer = need(s.anon, "the signed-out observer");
    const hideWord = `hidew${nonce().slice(0, 5)}`;
    const warnWord = `warnw${nonce().slice(0, 5)}`;
    const filters = [];
    for (const [title, action, keyword] of [
      ["Warn me (e2e)", "warn", warnWord],
      ["Hide it (e2e)", "hide", hideWord],
    ]) {
      const seen = user.events.items.length;
      const f = await step(`POST /api/v2/filters (${action})`, () =>
        a.client.v2.filters.create({ title, context: ["home", "public"], filterAction: action, keywordsAttributes: [{ keyword, wholeWord: true }] }),
      );
      filters.push(f);
      // The client refetches its filters on this event; the server has dropped what it cached by then.
      await user.events.waitFor((e, i) => i >= seen && e.event === "filters_changed", `filters_changed after creating the ${action} filter`);
    }

    const hidden = await post(b, `Something about ${hideWord} ${nonce()}`, { visibility: "public" });
    await observer.messages.waitFor((m) => m?.event === "update" && JSON.parse(m.payload).id === hidden.id, "the hidden post is published (seen signed out)");
    const warned = await post(b, `Something about ${warnWord} ${nonce()}`, { visibility: "public" });
    for (const [name, sub] of [
      ["user", user],
      ["public:local", local],
    ]) {
      const ev = await sub.events.waitFor(isUpdateOf(warned.id), `the warned post on ${name}`);
      assert.ok(Array.isArray(ev.payload.filtered) && ev.payload.filtered.length === 1, `filtered is set on ${name}`);
      assert.equal(ev.payload.filtered[0].filter.title, "Warn me (e2e)");
      assert.equal(ev.payload.filtered[0].filter.filterAction, "warn");
      assert.deepEqual(ev.payload.filtered[0].keywordMatches, [warnWord]);
      assert.ok(!sub.events.some(isUpdateOf(hidden.id)), `the hidden post never reached ${name}`);
    }
    for (const f of filters) await step("DELETE /api/v2/filters/:id", () => a.client.v2.filters.$select(f.id).remove());
  });

  test("a new filter applies to a connection that only watches public streams (no `user` stream to hear filters_changed)", async () => {
    const { b, d } = s;
    const local = need(s.dLocal, "D's public:local stream");
    const observer = need(s.anon, "the signed-out observer");
    assert.ok(local.events.items.length > 0, "D's connection has seen public posts (what it caches about D is loaded)");
    const word = `later${nonce().slice(0, 5)}`;
    await step("POST /api/v2/filters (hide)", () =>
      d.client.v2.filters.create({
        title: "Hide later (e2e)",
        context: ["public"],
        filterAction: "hide",
        keywordsAttributes: [{ keyword: word, wholeWord: true }],
      }),
    );
    // Nothing tells this client that the server applied the filter; each round is a post with the word, then a post
    // without it: the filter has taken effect when the second reaches D and the first did not. A server that
    // forgot to drop its cache keeps delivering the first for minutes.
    const deadline = Date.now() + WAIT_MS;
    for (let round = 1; ; round++) {
      const filtered = await post(b, `About ${word}, round ${round} ${nonce()}`, { visibility: "public" });
      await observer.messages.waitFor((m) => m?.event === "update" && JSON.parse(m.payload).id === filtered.id, "the filtered post is published");
      const plain = await post(b, `Plain, round ${round} ${nonce()}`, { visibility: "public" });
      await local.events.waitFor(isUpdateOf(plain.id), "the plain post reaches D");
      if (!local.events.some(isUpdateOf(filtered.id))) break;
      assert.ok(round < 15 && Date.now() < deadline, `D still receives posts its hide filter matches after ${round} rounds`);
    }
  });

  test("direct: a direct status reaches the mentioned user's `direct` stream as a `conversation`; GET /api/v1/conversations lists it", async () => {
    const { a, b } = s;
    const sc = need(s.aStream, "A's streaming client");
    const direct = await listen(sc, sc.client.direct.subscribe(), "direct");
    const st = await post(b, `@${a.username} just between us ${nonce()}`, { visibility: "direct" });
    const ev = await direct.events.waitFor((e) => e.event === "conversation" && e.payload?.lastStatus?.id === st.id, "`conversation` on A's direct stream");
    assert.deepEqual(ev.stream, ["direct"]);
    assert.match(ev.payload.id, /^\d+$/);
    assert.equal(ev.payload.unread, true);
    assert.deepEqual(
      ev.payload.accounts.map((x) => x.id),
      [b.id],
      "the other participants",
    );
    assert.equal(ev.payload.lastStatus.visibility, "direct");
    assert.ok(!direct.events.some((e) => e.event === "update"), "the direct stream carries conversations, not updates");
    const convs = await step("GET /api/v1/conversations", () => a.client.v1.conversations.list());
    const found = convs.find((x) => x.id === ev.payload.id);
    assert.ok(found, "the streamed conversation is listed");
    assert.equal(found.lastStatus?.id, st.id);
  });

  test("SSE: GET /api/v1/streaming/user with the token delivers `update`", async () => {
    const { a, b } = s;
    const sse = await openSse("/api/v1/streaming/user", a.token);
    assert.equal(sse.res.status, 200);
    assert.match(sse.res.headers.get("content-type") ?? "", /^text\/event-stream/);
    // The response starts once the stream is subscribed: nothing published after it is missed.
    const st = await post(b, `Over SSE ${nonce()}`, { visibility: "public" });
    const ev = await sse.events.waitFor((e) => e.event === "update" && parse(e.data)?.id === st.id, "update over SSE");
    const status = JSON.parse(ev.data);
    assert.equal(status.account.id, b.id);
    await step("DELETE /api/v1/statuses/:id", () => b.client.v1.statuses.$select(st.id).remove());
    const del = await sse.events.waitFor((e) => e.event === "delete", "delete over SSE");
    assert.equal(del.data, st.id, "SSE delete data is the bare id");
    sse.close();
  });
});
