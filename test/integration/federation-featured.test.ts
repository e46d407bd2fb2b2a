// A remote account's pinned statuses: GET /api/v1/accounts/:id/statuses?pinned=true answers from storage and, when
// the featured collection was not fetched in the last 6 hours, enqueues JOBS "fetch_featured", which fetches the
// collection from the simulated peer and replaces the account's status_pins.
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { padId, snowflake } from "../../src/lib/text/ids";
import { anon, eventually, makeUser } from "./helpers";
import { queued } from "./queues";

const HOST = "https://remote.example";
const AP = { headers: { "content-type": "application/activity+json" } };
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

interface Remote {
  id: string;
  uri: string;
  featured: string;
}

async function remoteAccount(username: string): Promise<Remote> {
  const id = snowflake();
  const uri = `${HOST}/users/${username}`;
  const featured = `${uri}/collections/featured`;
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, followers_url, featured_url, fetched_at, created_at, updated_at)
     VALUES (?1, ?2, 'remote.example', ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?8)`,
  )
    .bind(padId(id), username, uri, `${HOST}/@${username}`, `${uri}/inbox`, `${uri}/followers`, featured, now)
    .run();
  return { id, uri, featured };
}

function note(author: string, n: number) {
  const id = `${HOST}/users/${author}/statuses/${n}`;
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id,
    type: "Note",
    attributedTo: `${HOST}/users/${author}`,
    content: `<p>${author} pinned ${n}</p>`,
    published: "2024-01-02T03:04:05Z",
    to: [PUBLIC],
    cc: [`${HOST}/users/${author}/followers`],
  };
}

const serve = (doc: { id: string }) =>
  fetchMock
    .get(HOST)
    .intercept({ path: new URL(doc.id).pathname })
    .reply(200, JSON.stringify(doc), AP);

function serveCollection(a: Remote, items: unknown[], type = "OrderedCollection") {
  const key = type === "OrderedCollection" ? "orderedItems" : "items";
  serve({ "@context": "https://www.w3.org/ns/activitystreams", id: a.featured, type, totalItems: items.length, [key]: items } as any);
}

const pinned = (a: Remote) => anon.get(`/api/v1/accounts/${a.id}/statuses?pinned=true`);
const featuredJobs = () => queued.jobs.filter((j) => j.type === "fetch_featured");

async function pinRows(a: Remote): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT s.uri FROM status_pins p JOIN statuses s ON s.id = p.status_id WHERE p.account_id = ? ORDER BY p.id DESC")
    .bind(padId(a.id))
    .all<{ uri: string }>();
  return results.map((r) => r.uri);
}

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
afterEach(() => fetchMock.assertNoPendingInterceptors());

describe("pinned statuses of a remote account", () => {
  it("are fetched from the featured collection off the request path, then served; refreshed only after 6 hours", async () => {
    const bob = await remoteAccount("bob");
    const [n1, n2] = [note("bob", 1), note("bob", 2)];
    serveCollection(bob, [n1.id, n2.id]);
    serve(n1);
    serve(n2);

    // First request: nothing known yet, one job enqueued, no fetch in the request.
    const first = await pinned(bob);
    expect(first.status).toBe(200);
    expect(first.body).toEqual([]);
    expect(featuredJobs()).toEqual([{ type: "fetch_featured", accountId: bob.id, origin: "http://tern.test" }]);

    const after = await eventually(async () => {
      const res = await pinned(bob);
      expect(res.body).toHaveLength(2);
      return res;
    });
    expect(after.body.map((s: any) => s.uri).sort()).toEqual([n1.id, n2.id]);
    expect(after.body[0]).toMatchObject({ account: { id: bob.id, acct: "bob@remote.example" }, visibility: "public" });
    expect(after.body.map((s: any) => s.content).sort()).toEqual(["<p>bob pinned 1</p>", "<p>bob pinned 2</p>"]);
    // The collection's order is kept: its first item is the most recent pin.
    expect(await pinRows(bob)).toEqual([n1.id, n2.id]);
    // Pinned only: another status of bob's is not in the list.
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, account_id, local, visibility, content, created_at, updated_at) VALUES (?1, ?2, ?3, 0, 'public', '<p>x</p>', ?4, ?4)",
    )
      .bind(padId(snowflake()), `${HOST}/users/bob/statuses/99`, padId(bob.id), Date.now())
      .run();
    expect((await pinned(bob)).body).toHaveLength(2);
    expect((await anon.get(`/api/v1/accounts/${bob.id}/statuses`)).body).toHaveLength(3);

    // Within 6 hours: nothing is enqueued (and nothing fetched: no interceptor is left to answer).
    queued.jobs.length = 0;
    const again = await pinned(bob);
    expect(again.body).toHaveLength(2);
    expect(featuredJobs()).toEqual([]);

    // After 6 hours: fetched again; the collection now has a first page (one more fetch) listing only note 2.
    await env.DB.prepare("UPDATE accounts SET featured_fetched_at = ? WHERE id = ?")
      .bind(Date.now() - 7 * 3600_000, padId(bob.id))
      .run();
    const pageId = `${bob.featured}?page=1`;
    serve({ "@context": "https://www.w3.org/ns/activitystreams", id: bob.featured, type: "OrderedCollection", totalItems: 1, first: pageId } as any);
    fetchMock
      .get(HOST)
      .intercept({ path: "/users/bob/collections/featured?page=1" })
      .reply(200, JSON.stringify({ id: pageId, type: "OrderedCollectionPage", partOf: bob.featured, orderedItems: [n2.id] }), AP);
    const stale = await pinned(bob);
    expect(stale.body).toHaveLength(2); // still what was known
    expect(featuredJobs()).toHaveLength(1);
    await eventually(async () => expect((await pinned(bob)).body.map((s: any) => s.uri)).toEqual([n2.id]));
    expect(await pinRows(bob)).toEqual([n2.id]);
  });

  it("ignores items attributed to another actor, embedded or fetched; embedded own notes need no fetch", async () => {
    const dana = await remoteAccount("dana");
    await remoteAccount("carl"); // known, so resolving his note fetches no actor
    const own = note("dana", 7);
    const foreignEmbedded = note("carl", 1);
    const foreignFetched = note("carl", 2);
    // An embedded note claiming dana as author but with an id on another host is not taken either.
    const offHost = { ...note("dana", 8), id: "https://elsewhere.example/users/dana/statuses/8" };
    serveCollection(dana, [foreignEmbedded, foreignFetched.id, own, offHost], "Collection");
    serve(foreignFetched);

    await pinned(dana);
    expect(featuredJobs()).toHaveLength(1);
    await eventually(async () => expect((await pinned(dana)).body.map((s: any) => s.uri)).toEqual([own.id]));
    expect(await pinRows(dana)).toEqual([own.id]);
    // carl's fetched note is stored as his, not pinned by dana; the embedded one was never stored.
    const { results } = await env.DB.prepare("SELECT uri FROM statuses WHERE uri LIKE ?").bind(`${HOST}/users/carl/%`).all<{ uri: string }>();
    expect(results.map((r) => r.uri)).toEqual([foreignFetched.id]);
  });

  it("keeps only the first 5 items, in the collection's order", async () => {
    const eve = await remoteAccount("eve");
    const notes = [1, 2, 3, 4, 5, 6].map((n) => note("eve", n));
    serveCollection(eve, notes); // embedded: no further fetches
    await pinned(eve);
    await eventually(async () => expect(await pinRows(eve)).toEqual(notes.slice(0, 5).map((n) => n.id)));
  });

  it("a collection that cannot be fetched leaves the pins as they were", async () => {
    const fay = await remoteAccount("fay");
    fetchMock
      .get(HOST)
      .intercept({ path: "/users/fay/collections/featured" })
      .reply(200, "<html></html>", { headers: { "content-type": "text/html" } });
    await pinned(fay);
    expect(featuredJobs()).toHaveLength(1);
    await eventually(() => expect(queued.jobs).toHaveLength(0));
    expect((await pinned(fay)).body).toEqual([]);
    expect(featuredJobs()).toEqual([]);
  });

  it("local accounts and remote accounts without a featured collection enqueue nothing", async () => {
    const u = await makeUser();
    expect((await anon.get(`/api/v1/accounts/${u.id}/statuses?pinned=true`)).status).toBe(200);
    const gil = await remoteAccount("gil");
    await env.DB.prepare("UPDATE accounts SET featured_url = NULL WHERE id = ?").bind(padId(gil.id)).run();
    expect((await pinned(gil)).body).toEqual([]);
    expect(featuredJobs()).toEqual([]);
  });
});
