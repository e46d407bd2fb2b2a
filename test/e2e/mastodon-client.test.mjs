// End to end with a real Mastodon client library (masto 8) against `wrangler dev`: what a third-party app does.
// Steps share state and run in order; a step whose prerequisite failed fails with "blocked by ...".
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import { startTern } from "../support/server.mjs";

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write follow push";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value or the time runs out; returns the last value. */
async function eventually(fn, { timeoutMs = 10_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (true) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) return last;
    await sleep(intervalMs);
  }
}

/** Makes masto's HTTP errors say which request failed and how. */
async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e?.statusCode) {
      throw new Error(`${what}: HTTP ${e.statusCode} ${JSON.stringify(e.message)}${e.description ? ` (${e.description})` : ""}`, {
        cause: e,
      });
    }
    throw e;
  }
}

function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

const byIdDesc = (a, b) => (BigInt(b) > BigInt(a) ? 1 : BigInt(b) < BigInt(a) ? -1 : 0);

describe("Mastodon client flow (masto 8 against wrangler dev)", () => {
  let server;
  let anon;
  const s = {}; // shared state between steps

  before(async () => {
    server = await startTern();
    anon = createRestAPIClient({ url: server.url, timeout: 20_000 });
  });
  after(async () => {
    await server?.stop();
  });

  const client = (accessToken) => createRestAPIClient({ url: server.url, accessToken, timeout: 20_000 });

  test("GET /api/v2/instance", async () => {
    const inst = await step("GET /api/v2/instance", () => anon.v2.instance.fetch());
    assert.equal(typeof inst.domain, "string");
    assert.ok(inst.domain.length > 0, "domain");
    assert.equal(typeof inst.title, "string");
    assert.equal(typeof inst.version, "string");
    assert.ok(inst.configuration?.statuses?.maxCharacters > 0, "configuration.statuses.max_characters");
    assert.equal(inst.registrations?.enabled, true, "registrations.enabled (REGISTRATIONS_MODE=open)");
  });

  test("POST /api/v1/apps", async () => {
    const app = await step("POST /api/v1/apps", () =>
      anon.v1.apps.create({ clientName: "Tern e2e", redirectUris: OOB, scopes: SCOPES, website: "https://example.test" }),
    );
    assert.equal(app.name, "Tern e2e");
    assert.ok(app.clientId, "client_id");
    assert.ok(app.clientSecret, "client_secret");
    s.app = app;
  });

  test("POST /oauth/token (client_credentials) and GET /api/v1/apps/verify_credentials", async () => {
    const app = need(s.app, "POST /api/v1/apps");
    const oauth = createOAuthAPIClient({ url: server.url, timeout: 20_000 });
    const token = await step("POST /oauth/token", () =>
      oauth.token.create({
        grantType: "client_credentials",
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        redirectUri: OOB,
        scope: SCOPES,
      }),
    );
    assert.ok(token.accessToken, "access_token");
    assert.match(token.tokenType, /^bearer$/i);
    const verified = await step("GET /api/v1/apps/verify_credentials", () => client(token.accessToken).v1.apps.verifyCredentials());
    assert.equal(verified.name, "Tern e2e");
    s.appToken = token.accessToken;
  });

  test("POST /api/v1/accounts signs up users A and B", async () => {
    const appClient = client(need(s.appToken, "client_credentials token"));
    const suffix = Date.now().toString(36).slice(-5);
    for (const who of ["a", "b"]) {
      const username = `e2e_${who}_${suffix}`;
      const token = await step(`POST /api/v1/accounts (${who})`, () =>
        appClient.v1.accounts.create({
          username,
          email: `${username}@example.test`,
          password: "correct horse battery staple",
          agreement: true,
          locale: "en",
        }),
      );
      assert.ok(token.accessToken, `access_token for ${who}`);
      s[who] = { username, token: token.accessToken, client: client(token.accessToken) };
    }
  });

  test("GET /api/v1/accounts/verify_credentials", async () => {
    for (const who of ["a", "b"]) {
      const u = need(s[who], "sign-up");
      const me = await step(`GET /api/v1/accounts/verify_credentials (${who})`, () => u.client.v1.accounts.verifyCredentials());
      assert.equal(me.username, u.username);
      assert.equal(me.acct, u.username, "local acct has no domain");
      assert.ok(/^\d+$/.test(me.id), "id is a numeric string");
      assert.ok(me.source, "verify_credentials includes source");
      u.id = me.id;
    }
  });

  test("PATCH /api/v1/accounts/update_credentials (multipart, as masto sends it)", async () => {
    const a = need(s.a?.id && s.a, "verify_credentials");
    const updated = await step("PATCH /api/v1/accounts/update_credentials", () =>
      a.client.v1.accounts.updateCredentials({ displayName: "Alice E2E", note: "Testing Tern" }),
    );
    assert.equal(updated.displayName, "Alice E2E");
    assert.equal(updated.source?.note, "Testing Tern");
    const again = await a.client.v1.accounts.verifyCredentials();
    assert.equal(again.displayName, "Alice E2E", "change persisted");
  });

  test("B posts a public status", async () => {
    const b = need(s.b?.id && s.b, "verify_credentials");
    const status = await step("POST /api/v1/statuses", () => b.client.v1.statuses.create({ status: "Hello from B, the e2e test", visibility: "public" }));
    assert.ok(/^\d+$/.test(status.id));
    assert.match(status.content, /Hello from B/);
    assert.equal(status.visibility, "public");
    assert.equal(status.account.id, b.id);
    s.post = status;
  });

  test("A follows B; B is notified", async () => {
    const a = need(s.a?.id && s.a, "verify_credentials");
    const b = need(s.b?.id && s.b, "verify_credentials");
    const rel = await step("POST /api/v1/accounts/:id/follow", () => a.client.v1.accounts.$select(b.id).follow());
    assert.equal(rel.id, b.id);
    assert.equal(rel.following, true, "following (B is not locked)");
    s.follows = true;
    const note = await eventually(async () => {
      const list = await step("GET /api/v1/notifications", () => b.client.v1.notifications.list({ limit: 30 }));
      return list.find((n) => n.type === "follow" && n.account?.id === a.id);
    });
    assert.ok(note, "B has a follow notification from A");
  });

  test("A's home timeline receives B's post (fan-out through the queue, within 10 s)", async () => {
    const a = need(s.follows && s.a, "A follows B");
    const post = need(s.post, "B posts");
    const found = await eventually(async () => {
      const page = await step("GET /api/v1/timelines/home", () => a.client.v1.timelines.home.list({ limit: 20 }));
      return page.find((x) => x.id === post.id);
    });
    assert.ok(found, "B's post shows up in A's home timeline within 10 s");
    s.inHome = true;
  });

  test("A favourites B's post; B is notified", async () => {
    const a = need(s.a?.id && s.a, "sign-up");
    const b = need(s.b?.id && s.b, "sign-up");
    const post = need(s.post, "B posts");
    const faved = await step("POST /api/v1/statuses/:id/favourite", () => a.client.v1.statuses.$select(post.id).favourite());
    assert.equal(faved.id, post.id);
    assert.equal(faved.favourited, true);
    assert.equal(faved.favouritesCount, 1);
    const note = await eventually(async () => {
      const list = await step("GET /api/v1/notifications", () => b.client.v1.notifications.list({ limit: 30 }));
      return list.find((n) => n.type === "favourite" && n.status?.id === post.id && n.account?.id === a.id);
    });
    assert.ok(note, "B has a favourite notification from A about the post");
  });

  test("A reblogs B's post; B is notified", async () => {
    const a = need(s.a?.id && s.a, "sign-up");
    const post = need(s.post, "B posts");
    const rb = await step("POST /api/v1/statuses/:id/reblog", () => a.client.v1.statuses.$select(post.id).reblog());
    assert.notEqual(rb.id, post.id, "a reblog is its own status");
    assert.equal(rb.reblog?.id, post.id);
    assert.equal(rb.account.id, a.id);
    assert.equal(rb.reblog.reblogged, true);
    const b = need(s.b?.id && s.b, "sign-up");
    const note = await eventually(async () => {
      const list = await b.client.v1.notifications.list({ limit: 30 });
      return list.find((n) => n.type === "reblog" && n.status?.id === post.id && n.account?.id === a.id);
    });
    assert.ok(note, "B has a reblog notification from A");
    const fetched = await a.client.v1.statuses.$select(post.id).fetch();
    assert.equal(fetched.reblogsCount, 1);
    assert.equal(fetched.reblogged, true);
  });

  test("A bookmarks B's post; GET /api/v1/bookmarks lists it; unbookmark removes it", async () => {
    const a = need(s.a?.id && s.a, "sign-up");
    const post = need(s.post, "B posts");
    const bm = await step("POST /api/v1/statuses/:id/bookmark", () => a.client.v1.statuses.$select(post.id).bookmark());
    assert.equal(bm.bookmarked, true);
    const list = await step("GET /api/v1/bookmarks", () => a.client.v1.bookmarks.list());
    assert.deepEqual(
      list.map((x) => x.id),
      [post.id],
    );
    const un = await step("POST /api/v1/statuses/:id/unbookmark", () => a.client.v1.statuses.$select(post.id).unbookmark());
    assert.equal(un.bookmarked, false);
    assert.deepEqual(await a.client.v1.bookmarks.list(), []);
  });

  test("paginates A's home timeline over several pages with the Link header (masto's paginator)", async () => {
    const a = need(s.inHome && s.a, "home fan-out");
    const b = need(s.b?.id && s.b, "sign-up");
    const posted = [];
    for (let i = 1; i <= 25; i++) {
      const st = await step(`POST /api/v1/statuses (#${i})`, () => b.client.v1.statuses.create({ status: `Paginated post ${i}`, visibility: "public" }));
      posted.push(st.id);
    }
    const last = posted.at(-1);
    const arrived = await eventually(async () => (await a.client.v1.timelines.home.list({ limit: 5 })).some((x) => x.id === last), { timeoutMs: 20_000 });
    assert.ok(arrived, "the newest post reached A's home timeline");

    const pages = [];
    for await (const page of a.client.v1.timelines.home.list({ limit: 10 })) {
      pages.push(page);
      if (page.length === 0 || pages.length > 20) break;
    }
    const nonEmpty = pages.filter((p) => p.length > 0);
    assert.ok(nonEmpty.length >= 3, `at least 3 pages of ≤10 (got ${pages.map((p) => p.length).join(",")})`);
    for (const p of pages) assert.ok(p.length <= 10, "a page holds at most `limit` items");
    const ids = pages.flat().map((x) => x.id);
    assert.equal(new Set(ids).size, ids.length, "no status appears twice across pages");
    assert.deepEqual([...ids].sort(byIdDesc), ids, "newest first, across page boundaries");
    for (const id of posted) assert.ok(ids.includes(id), `post ${id} is on some page`);
    assert.ok(ids.includes(s.post.id), "the first post is reachable too");
  });
  test("reads a JSON body on GET, as Rails does, and keeps JSON integer ids above 2^53 exact", async () => {
    const a = need(s.a, "sign-up");
    const bId = (await s.b.client.v1.accounts.verifyCredentials()).id;
    // node:http sends a body with GET (fetch refuses to); Tern must read it as Mastodon does.
    const rels = await rawJson("GET", "/api/v1/accounts/relationships", a.token, JSON.stringify({ id: [bId] }));
    assert.equal(rels.status, 200);
    assert.deepEqual(
      rels.body.map((r) => [r.id, r.following]),
      [[bId, true]],
    );
    // A status id as a bare JSON number (as some libraries send it) is kept digit for digit.
    const id = need(s.post, "B posts").id;
    assert.ok(BigInt(id) > 2n ** 53n, "snowflake ids are beyond a double's exact range");
    const saved = await rawJson("POST", "/api/v1/markers", a.token, `{"home":{"last_read_id":${id}}}`);
    assert.equal(saved.status, 200);
    assert.equal(saved.body.home.last_read_id, id);
  });

  /** A request through node:http (which, unlike fetch, may send a body with GET); the parsed JSON answer. */
  function rawJson(method, path, token, body) {
    return new Promise((resolve, reject) => {
      const u = new URL(path, server.url);
      const req = httpRequest(
        u,
        { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }
});
