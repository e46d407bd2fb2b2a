// Resolving remote accounts from the REST API (search with resolve=true, POST /api/v1/follows) against a simulated
// peer, and the fetch guard on the way (security D1, D3, D5, D6, D9).
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { resolveActor, resolveHandle, ResolveError } from "../../src/federation/remote/remote-accounts";
import { anon, cfg, db, makeUser } from "./helpers";

const HOST = "https://remote.example";
const AP = { headers: { "content-type": "application/activity+json" } };

function actorDoc(username: string, extra: Record<string, unknown> = {}) {
  const id = `${HOST}/users/${username}`;
  return {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id,
    type: "Person",
    preferredUsername: username,
    name: `${username} remote`,
    summary: "<p>hi</p>",
    url: `${HOST}/@${username}`,
    inbox: `${id}/inbox`,
    outbox: `${id}/outbox`,
    followers: `${id}/followers`,
    following: `${id}/following`,
    endpoints: { sharedInbox: `${HOST}/inbox` },
    publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----" },
    ...extra,
  };
}

function webfinger(username: string, links?: unknown[]) {
  fetchMock
    .get(HOST)
    .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") && p.includes(encodeURIComponent(`acct:${username}@remote.example`)) })
    .reply(
      200,
      JSON.stringify({
        subject: `acct:${username}@remote.example`,
        links: links ?? [{ rel: "self", type: "application/activity+json", href: `${HOST}/users/${username}` }],
      }),
      { headers: { "content-type": "application/jrd+json" } },
    );
}

const serveActor = (username: string) =>
  fetchMock
    .get(HOST)
    .intercept({ path: `/users/${username}` })
    .reply(200, JSON.stringify(actorDoc(username)), AP);

let fetchSpy: MockInstance<typeof fetch>;
const fetchedUrls = () => fetchSpy.mock.calls.map(([input]) => (input instanceof Request ? input.url : String(input)));

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
beforeEach(() => {
  fetchSpy = vi.spyOn(globalThis, "fetch");
});
afterEach(() => {
  fetchSpy.mockRestore();
  fetchMock.assertNoPendingInterceptors();
});

describe("search with resolve=true", () => {
  it("resolves @user@domain through WebFinger for a signed-in user, then serves it from storage", async () => {
    const u = await makeUser();
    webfinger("bob");
    serveActor("bob");
    const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent("@bob@remote.example")}&resolve=true`);
    expect(res.status).toBe(200);
    expect(res.body.accounts).toHaveLength(1);
    expect(res.body.accounts[0]).toMatchObject({ username: "bob", acct: "bob@remote.example", display_name: "bob remote", url: `${HOST}/@bob` });
    const row = await env.DB.prepare("SELECT inbox_url, shared_inbox_url FROM accounts WHERE uri = ?").bind(`${HOST}/users/bob`).first();
    expect(row).toEqual({ inbox_url: `${HOST}/users/bob/inbox`, shared_inbox_url: `${HOST}/inbox` });
    // WebFinger goes out unsigned; the actor document is fetched signed (by the instance actor).
    const headersOf = (path: string) => {
      const call = fetchSpy.mock.calls.find(([input]) => (input instanceof Request ? input.url : String(input)).includes(path));
      expect(call, path).toBeDefined();
      const [input, init] = call!;
      return new Headers(input instanceof Request ? input.headers : init?.headers);
    };
    const signed = (h: Headers) => h.has("signature") || h.has("signature-input");
    expect(signed(headersOf("/.well-known/webfinger"))).toBe(false);
    expect(signed(headersOf("/users/bob"))).toBe(true);

    fetchSpy.mockClear();
    const again = await u.api.get(`/api/v2/search?q=${encodeURIComponent("bob@remote.example")}&resolve=true&type=accounts`);
    expect(again.body.accounts.map((a: any) => a.acct)).toEqual(["bob@remote.example"]);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("resolves an actor URL", async () => {
    const u = await makeUser();
    serveActor("carl");
    const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent(`${HOST}/users/carl`)}&resolve=true`);
    expect(res.body.accounts.map((a: any) => a.acct)).toEqual(["carl@remote.example"]);
  });

  it("resolves a status URL: the Note and its author are fetched, stored and returned", async () => {
    const u = await makeUser();
    const uri = `${HOST}/users/erin/statuses/42`;
    const note = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: uri,
      type: "Note",
      attributedTo: `${HOST}/users/erin`,
      content: "<p>found me</p>",
      published: "2024-01-02T03:04:05Z",
      url: `${HOST}/@erin/42`,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${HOST}/users/erin/followers`],
    };
    fetchMock.get(HOST).intercept({ path: "/users/erin/statuses/42" }).reply(200, JSON.stringify(note), AP);
    serveActor("erin");
    const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true`);
    expect(res.status).toBe(200);
    expect(res.body.statuses).toHaveLength(1);
    expect(res.body.statuses[0]).toMatchObject({ uri, content: "<p>found me</p>", account: { acct: "erin@remote.example" } });

    // Known now: found again without fetching, also by type=statuses.
    fetchSpy.mockClear();
    const again = await u.api.get(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true&type=statuses`);
    expect(again.body.statuses.map((s: any) => s.uri)).toEqual([uri]);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("never fetches for signed-out visitors or without resolve=true (D9)", async () => {
    const u = await makeUser();
    for (const q of ["https://attacker.example/x", "@bob@attacker.example"]) {
      const res = await anon.get(`/api/v2/search?q=${encodeURIComponent(q)}&resolve=true`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accounts: [], statuses: [], hashtags: [] });
      expect((await u.api.get(`/api/v2/search?q=${encodeURIComponent(q)}&resolve=false`)).body.accounts).toEqual([]);
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("answers an unresolvable query with empty results", async () => {
    const u = await makeUser();
    fetchMock
      .get(HOST)
      .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") })
      .reply(404, "");
    const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent("nobody@remote.example")}&resolve=true`);
    expect(res.status).toBe(200);
    expect(res.body.accounts).toEqual([]);
  });

  it("refuses local-ish hosts in a typed handle without fetching (D1)", async () => {
    const u = await makeUser();
    for (const q of ["zq@127.0.0.1", "zq@localhost", "zq@10.0.0.1", "zq@169.254.169.254", "zq@metadata.internal"]) {
      const res = await u.api.get(`/api/v2/search?q=${encodeURIComponent(q)}&resolve=true`);
      expect(res.status).toBe(200);
      expect(res.body.accounts).toEqual([]);
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("POST /api/v1/follows", () => {
  it("resolves an unknown remote account, then follows it through a request and a Follow", async () => {
    const u = await makeUser();
    webfinger("dora");
    serveActor("dora");
    const res = await u.api.post("/api/v1/follows", { uri: "dora@remote.example" });
    expect(res.status).toBe(200);
    // Shown as made (dora is not locked), as Mastodon's follow answers; stored as a request until her server accepts.
    expect(res.body).toMatchObject({ following: true, requested: false });
    const [stored] = await env.DB.prepare("SELECT count(*) AS n FROM follow_requests")
      .all<{ n: number }>()
      .then((r) => r.results);
    expect(stored?.n).toBe(1);
    const job = (await import("./queues")).queued.jobs.find((j) => j.type === "federate");
    expect(job).toMatchObject({ type: "federate", action: { kind: "follow", followUri: expect.stringMatching(/^http:\/\/tern\.test\/[0-9a-f-]{36}$/) } });
  });

  it("refuses an account without an ActivityPub actor with 422", async () => {
    const u = await makeUser();
    webfinger("olds", [
      { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: `${HOST}/olds` },
      { rel: "salmon", href: `${HOST}/salmon/1` },
    ]);
    const res = await u.api.post("/api/v1/follows", { uri: "acct:olds@remote.example" });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/older federation protocol/);
  });

  it("answers 404 when WebFinger does not know the account", async () => {
    const u = await makeUser();
    fetchMock
      .get(HOST)
      .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") })
      .reply(404, "");
    expect((await u.api.post("/api/v1/follows", { uri: "ghost@remote.example" })).status).toBe(404);
  });
});

describe("fetch guard while resolving", () => {
  const refused = async (p: Promise<unknown>) => {
    await expect(p).rejects.toBeInstanceOf(ResolveError);
  };

  it("refuses loopback, localhost and CR/LF handles without any fetch (D1, D7)", async () => {
    await refused(resolveHandle(db(), cfg(), "user", "127.0.0.1"));
    await refused(resolveHandle(db(), cfg(), "user", "localhost"));
    await refused(resolveHandle(db(), cfg(), "us\r\ner", "remote.example"));
    await refused(resolveHandle(db(), cfg(), "user", "remote.example\r\nX-Injected: 1"));
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("refuses a redirect to a private address during an actor fetch (D3)", async () => {
    fetchMock
      .get(HOST)
      .intercept({ path: "/users/red" })
      .reply(302, "", { headers: { location: "http://10.0.0.1/" } });
    await refused(resolveActor(db(), cfg(), `${HOST}/users/red`));
    expect(fetchedUrls()).toEqual([`${HOST}/users/red`]);
  });

  it("refuses an actor answered as text/html (D6)", async () => {
    fetchMock
      .get(HOST)
      .intercept({ path: "/users/html" })
      .reply(200, JSON.stringify(actorDoc("html")), { headers: { "content-type": "text/html" } });
    await expect(resolveActor(db(), cfg(), `${HOST}/users/html`)).rejects.toThrow(/content type text\/html/);
  });

  it("refuses an actor document over 1 MB (D5)", async () => {
    const big = JSON.stringify(actorDoc("big", { summary: "x".repeat(1024 * 1024 + 10) }));
    fetchMock.get(HOST).intercept({ path: "/users/big" }).reply(200, big, AP);
    await expect(resolveActor(db(), cfg(), `${HOST}/users/big`)).rejects.toThrow(/too large/);
    const row = await env.DB.prepare("SELECT 1 AS x FROM accounts WHERE uri = ?").bind(`${HOST}/users/big`).first();
    expect(row).toBeNull();
  });
});
