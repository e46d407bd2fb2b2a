// Conversation backfill (src/federation/remote/backfill.ts): GET /api/v1/statuses/:id/context of a remote status fetches the
// thread's missing ancestors and replies through the guarded fetch, within a budget of fetches, depth and time, never
// again within the cooldown, and never for signed-out visitors; what is found is not fanned out to home feeds.
import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { createDb } from "../../src/db/client";
import { runJob } from "../../src/background/effects-runner";
import { REQUEST_BUDGET } from "../../src/federation/remote/backfill";
import { anon, eventually, makeUser } from "./helpers";
import { create, deliver, installFetchMock, note, pad, type RemoteActor, remoteActor, replyWithoutParent, serveJson, sql } from "./federation-inbox-fixtures";
import { queued, unpack } from "./queues";

beforeAll(() => installFetchMock());

let fetchSpy: MockInstance<typeof fetch>;
const fetchedUrls = () => fetchSpy.mock.calls.map(([input]) => (input instanceof Request ? input.url : String(input)));
beforeEach(() => {
  fetchSpy = vi.spyOn(globalThis, "fetch");
});
afterEach(() => fetchSpy.mockRestore());

const pathOf = (uri: string) => new URL(uri).pathname;

/** Mastodon's shape: `replies` with an embedded first page (self-replies) and a `next` page with the others. */
function withReplies(n: Record<string, unknown>, replies: string[]): Record<string, unknown> {
  const id = n.id as string;
  return {
    ...n,
    replies: {
      id: `${id}/replies`,
      type: "Collection",
      first: { type: "CollectionPage", partOf: `${id}/replies`, items: [], next: `${id}/replies/page2` },
    },
    _page2: { id: `${id}/replies/page2`, type: "CollectionPage", partOf: `${id}/replies`, items: replies },
  };
}

/** Serves a Note (and its second replies page) from the author's host. */
function serveNote(a: RemoteActor, doc: Record<string, unknown>): void {
  const { _page2, ...n } = doc;
  serveJson(a.host, pathOf(n.id as string), n);
  if (_page2) serveJson(a.host, pathOf((_page2 as { id: string }).id), _page2);
}

async function follow(readerId: string, a: RemoteActor): Promise<void> {
  const [row] = await sql("SELECT id FROM accounts WHERE uri = ?", a.uri);
  await sql(
    "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
    pad(String(Math.floor(Math.random() * 1e9))),
    pad(readerId),
    row!.id,
    Date.now(),
  );
}

/** Runs the captured JOBS messages (federate ones only recorded); returns the effect types seen. */
async function runAllJobs(): Promise<string[]> {
  const db = createDb(env.DB);
  const seen: string[] = [];
  while (queued.jobs.length) {
    const job = queued.jobs.shift()!;
    seen.push(...unpack(job).map((e) => e.type));
    if (job.type !== "federate") await runJob(db, env, job);
  }
  return seen;
}

const uris = (list: { uri: string }[]) => list.map((s) => s.uri);

describe("conversation backfill", () => {
  it("fetches the missing ancestors and replies of a remote reply; they stay out of home; no refetch within the cooldown", async () => {
    const reader = await makeUser("bfreader");
    const ann = await remoteActor("ann", "thread.example");
    const ben = await remoteActor("ben", "thread.example");
    const root = note(ann, { content: "<p>root</p>" });
    const r1 = note(ben, { content: "<p>reply 1</p>", inReplyTo: root.id });
    const r2 = note(ann, { content: "<p>reply 2</p>", inReplyTo: r1.id });
    const r3 = note(ben, { content: "<p>reply 3</p>", inReplyTo: r2.id });

    // The reader follows both; r2 arrives while its parents cannot be fetched: stored without a parent.
    for (const a of [ann, ben]) {
      await deliver(a, { id: `${a.uri}#hello`, type: "Like", actor: a.uri, object: "https://x.example/none" });
      await follow(reader.id, a);
    }
    await deliver(ann, create(ann, r2));
    const [r2row] = await sql("SELECT CAST(id AS TEXT) AS id, in_reply_to_id FROM statuses WHERE uri = ?", r2.id);
    expect(r2row!.in_reply_to_id).toBeNull();
    const r2id = String(BigInt(r2row!.id));

    serveNote(ann, withReplies(root, [r1.id as string]));
    serveNote(ben, withReplies(r1, [r2.id as string]));
    serveNote(ann, withReplies(r2, [r3.id as string]));
    serveNote(ben, withReplies(r3, []));

    // Signed out: no fetch, the context as stored.
    fetchSpy.mockClear();
    const before = await anon.get(`/api/v1/statuses/${r2id}/context`);
    expect(before.body).toEqual({ ancestors: [], descendants: [] });
    expect(fetchedUrls()).toEqual([]);

    const ctx = await reader.api.get(`/api/v1/statuses/${r2id}/context`);
    expect(ctx.status).toBe(200);
    expect(uris(ctx.body.ancestors)).toEqual([root.id, r1.id]);
    expect(uris(ctx.body.descendants)).toEqual([r3.id]);
    expect(fetchedUrls().every((u) => u.startsWith("https://thread.example/"))).toBe(true);
    expect(fetchedUrls().filter((u) => u.includes("/statuses/")).length).toBeLessThanOrEqual(REQUEST_BUDGET.fetches);
    // r2 is threaded now: its parent counts it.
    const [r1row] = await sql("SELECT replies_count FROM statuses WHERE uri = ?", r1.id);
    expect(r1row!.replies_count).toBe(1);
    expect((await reader.api.get(`/api/v1/statuses/${r2id}`)).body.in_reply_to_id).not.toBeNull();

    // Late statuses: no fan-out, so home has only r2 (delivered by Create).
    const jobs = await runAllJobs();
    expect(jobs).not.toContain("backfill_thread");
    const home = await reader.api.get("/api/v1/timelines/home");
    expect(uris(home.body)).toEqual([r2.id]);

    // Within the cooldown: no fetch at all, the same thread from storage.
    fetchSpy.mockClear();
    const again = await reader.api.get(`/api/v1/statuses/${r2id}/context`);
    expect(uris(again.body.ancestors)).toEqual([root.id, r1.id]);
    expect(fetchedUrls()).toEqual([]);
    // A context of another status of the same thread is the same thread: no fetch either.
    const [r3row] = await sql("SELECT CAST(id AS TEXT) AS id FROM statuses WHERE uri = ?", r3.id);
    const fromR3 = await reader.api.get(`/api/v1/statuses/${String(BigInt(r3row!.id))}/context`);
    expect(uris(fromR3.body.ancestors)).toEqual([root.id, r1.id, r2.id]);
    expect(fetchedUrls()).toEqual([]);
  });

  it("stops at the fetch budget and leaves the rest to a background job", async () => {
    const reader = await makeUser("bfreader2");
    const cat = await remoteActor("cat", "chain.example");
    // A chain of 16: s0 ← s1 ← … ← s15; only s15 is known.
    const chain: Record<string, unknown>[] = [];
    for (let i = 0; i < 16; i++) chain.push(note(cat, { content: `<p>s${i}</p>`, inReplyTo: i ? chain[i - 1]!.id : null }));
    await deliver(cat, create(cat, chain[15]!));
    for (const n of chain) serveJson(cat.host, pathOf(n.id as string), n);
    const [last] = await sql("SELECT CAST(id AS TEXT) AS id FROM statuses WHERE uri = ?", chain[15]!.id);

    fetchSpy.mockClear();
    const ctx = await reader.api.get(`/api/v1/statuses/${String(BigInt(last!.id))}/context`);
    const statusFetches = fetchedUrls().filter((u) => u.includes("/statuses/"));
    expect(statusFetches.length).toBeLessThanOrEqual(REQUEST_BUDGET.fetches);
    expect(ctx.body.ancestors.length).toBeGreaterThan(0);
    expect(ctx.body.ancestors.length).toBeLessThan(15);
    // The rest comes in the background: the whole chain, in order.
    expect(await runAllJobs()).toContain("backfill_thread");
    const full = await reader.api.get(`/api/v1/statuses/${String(BigInt(last!.id))}/context`);
    expect(uris(full.body.ancestors)).toEqual(chain.slice(0, 15).map((n) => n.id));
  });

  it("answers within the time budget when the remote server is slow", async () => {
    const reader = await makeUser("bfreader3");
    const dan = await remoteActor("dan", "slow.example");
    const { parent, reply: child, replyId: childId } = await replyWithoutParent(dan, "<p>slow parent</p>", "<p>child</p>");
    serveJson(dan.host, pathOf(child.id as string), child);
    fetchMock
      .get("https://slow.example")
      .intercept({ path: pathOf(parent.id as string) })
      .reply(200, JSON.stringify(parent), { headers: { "content-type": "application/activity+json" } })
      .delay(REQUEST_BUDGET.ms + 6000);
    // Later fetches (the background pass) are answered at once.
    serveJson(dan.host, pathOf(parent.id as string), parent);

    const t0 = Date.now();
    const ctx = await reader.api.get(`/api/v1/statuses/${childId}/context`);
    // Cut at the budget, well before the slow answer (6 s after it): room for a busy machine's own slowness.
    expect(Date.now() - t0).toBeLessThan(REQUEST_BUDGET.ms + 4000);
    expect(ctx.body.ancestors).toEqual([]);
    expect(unpack(queued.jobs.at(-1)!).map((e) => e.type)).toContain("backfill_thread");
    // The background pass fetches what the request could not wait for.
    await eventually(async () => {
      expect((await sql("SELECT count(*) AS n FROM statuses WHERE uri = ?", parent.id))[0]!.n).toBe(1);
    });
  });

  it("a local reply in a remote thread backfills the thread above it", async () => {
    const u = await makeUser("bflocalreply");
    const eve = await remoteActor("eve", "eve.example");
    const { parent: top, reply: mid, replyId: midId } = await replyWithoutParent(eve, "<p>top</p>", "<p>mid</p>");
    serveJson(eve.host, pathOf(top.id as string), top);
    serveJson(eve.host, pathOf(mid.id as string), mid);
    const reply = await u.api.post("/api/v1/statuses", { status: "a local reply", in_reply_to_id: midId, visibility: "public" });
    expect(reply.status).toBe(200);
    const ctx = await u.api.get(`/api/v1/statuses/${reply.body.id}/context`);
    expect(uris(ctx.body.ancestors)).toEqual([top.id, mid.id]);
  });

  it("reads GoToSocial's replies page, served with an id that differs from its URL in the query", async () => {
    const reader = await makeUser("bfgts");
    const ann = await remoteActor("gann", "gts.example");
    const bob = await remoteActor("gbob", "gts.example");
    const root = note(ann, { content: "<p>a GoToSocial thread</p>" });
    const reply = note(bob, { content: "<p>its reply</p>", inReplyTo: root.id });
    const base = `${root.id}/replies`;
    const doc = { ...root, replies: { id: base, type: "OrderedCollection", first: `${base}?only_other_accounts=false&page=true` } };
    await deliver(ann, { id: `${ann.uri}#hello`, type: "Like", actor: ann.uri, object: "https://x.example/none" });
    await follow(reader.id, ann);
    await deliver(ann, create(ann, doc));
    serveJson(ann.host, pathOf(root.id as string), doc);
    serveJson(ann.host, `${pathOf(base)}?only_other_accounts=false&page=true`, {
      id: `${base}?limit=20&only_other_accounts=false`,
      type: "OrderedCollectionPage",
      partOf: base,
      orderedItems: [reply.id],
    });
    serveJson(bob.host, pathOf(reply.id as string), reply);
    const [row] = await sql("SELECT CAST(id AS TEXT) AS id FROM statuses WHERE uri = ?", root.id);
    const ctx = await reader.api.get(`/api/v1/statuses/${String(BigInt(row!.id))}/context`);
    expect(uris(ctx.body.descendants)).toEqual([reply.id]);
  });

  it("does nothing for a local thread", async () => {
    const u = await makeUser("bflocal");
    const s = await u.api.post("/api/v1/statuses", { status: "all local", visibility: "public" });
    fetchSpy.mockClear();
    expect((await u.api.get(`/api/v1/statuses/${s.body.id}/context`)).body).toEqual({ ancestors: [], descendants: [] });
    expect(fetchedUrls()).toEqual([]);
    expect((await sql("SELECT count(*) AS n FROM thread_backfills"))[0]!.n).toBe(0);
  });
});
