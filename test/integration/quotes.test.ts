// Quote posts over REST (Mastodon 4.5): quoted_status_id and quote_approval_policy on create, the Quote entity on
// statuses (nested as ShallowQuote), quotes_count and quote_approval, /quotes, revoking, interaction_policy, and the
// quote / quoted_update notifications.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, links, makeUser, type Res, type TestUser } from "./helpers";
import { queued, unpack } from "./queues";
import { timedGet } from "./server-timing-fixtures";

const roundTrips = (r: Res) => Number(/dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? NaN);

async function post(u: TestUser, body: Record<string, unknown>) {
  const r = await u.api.post("/api/v1/statuses", body);
  return r;
}

const federated = () =>
  queued.jobs
    .flatMap(unpack)
    .filter((e) => e.type === "federate")
    .map((e) => (e as { action: { kind: string } }).action);

describe("quote posts", { timeout: 60000 }, () => {
  it("a local quote of a local public status is accepted at once, counted and notified", async () => {
    const [alice, bob] = await Promise.all([makeUser("alice"), makeUser("bob")]);
    const orig = (await post(alice, { status: "original" })).body;
    expect(orig.quotes_count).toBe(0);
    expect(orig.quote).toBeNull();
    expect(orig.quote_approval).toEqual({ automatic: ["public"], manual: [], current_user: "automatic" });

    queued.jobs.length = 0;
    const q = await post(bob, { status: "look at this", quoted_status_id: orig.id });
    expect(q.status).toBe(200);
    expect(q.body.quote.state).toBe("accepted");
    expect(q.body.quote.quoted_status.id).toBe(orig.id);
    expect(q.body.quote.quoted_status.account.username).toBe("alice");
    expect(q.body.quote.quoted_status.quote).toBeNull();
    expect(federated().map((a) => a.kind)).toEqual(["create"]);

    const seen = await bob.api.get(`/api/v1/statuses/${orig.id}`);
    expect(seen.body.quotes_count).toBe(1);
    expect(seen.body.quote_approval.current_user).toBe("automatic");

    const notes = await alice.api.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => [n.type, n.account.username, n.status?.id])).toEqual([["quote", "bob", q.body.id]]);

    // Signed out: the quote and its status still show; quote_approval answers "denied".
    const out = await anon.get(`/api/v1/statuses/${q.body.id}`);
    expect(out.body.quote.quoted_status.id).toBe(orig.id);
    expect(out.body.quote_approval.current_user).toBe("denied");
  });

  it("a quote of a quote shows the inner quote as a ShallowQuote; the bundle's round trips do not grow", async () => {
    const [alice, bob, carol] = await Promise.all([makeUser("alice"), makeUser("bob"), makeUser("carol")]);
    const a = (await post(alice, { status: "a" })).body;
    const plain = await carol.api.get(`/api/v1/statuses/${a.id}`);
    const b = (await post(bob, { status: "b", quoted_status_id: a.id })).body;
    const c = (await post(carol, { status: "c", quoted_status_id: b.id })).body;
    expect(c.quote.quoted_status.id).toBe(b.id);
    expect(c.quote.quoted_status.quote).toEqual({ state: "accepted", quoted_status_id: a.id });
    const read = await carol.api.get(`/api/v1/statuses/${c.id}`);
    expect(read.body.quote.quoted_status.quote).toEqual({ state: "accepted", quoted_status_id: a.id });
    expect(roundTrips(read)).toBe(roundTrips(plain));
    // A boost of a quote carries the quote inside `reblog`.
    const boost = await alice.api.post(`/api/v1/statuses/${c.id}/reblog`);
    const item = (await alice.api.get(`/api/v1/statuses/${boost.body.id}`)).body;
    expect(item.quote).toBeNull();
    expect(item.reblog.quote.quoted_status.id).toBe(b.id);
  });

  it("an account's statuses show its quotes, reading each one's quote by its own id however many quotes exist", async () => {
    const [dan, eve] = await Promise.all([makeUser("dan"), makeUser("eve")]);
    const o = (await post(dan, { status: "quote me" })).body;
    await post(eve, { status: "plain" });
    const q = (await post(eve, { status: "quoting", quoted_status_id: o.id })).body;
    const boost = (await eve.api.post(`/api/v1/statuses/${q.id}/reblog`)).body;
    const page = await timedGet(`/api/v1/accounts/${eve.id}/statuses`, dan.token);
    expect(page.body.map((s: any) => s.id)).toEqual([boost.id, q.id, expect.any(String)]);
    expect(page.body[0].reblog.quote.quoted_status.id).toBe(o.id);
    expect(page.body[1].quote.quoted_status.id).toBe(o.id);
    // 2,000 quotes of other statuses: the page's quote lookups are by status (quotes_status), not a scan of quotes.
    await env.DB.prepare(
      `INSERT INTO quotes (id, status_id, account_id, quoted_status_id, state, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1999)
       SELECT printf('%020d', 4000000000 + i), printf('%020d', 3000000000 + i), '00000000000000000001', ?, 'accepted', 0, 0 FROM n`,
    )
      .bind(o.id.padStart(20, "0"))
      .run();
    const again = await timedGet(`/api/v1/accounts/${eve.id}/statuses`, dan.token);
    expect(again.metrics.d1r).toBeLessThanOrEqual(page.metrics.d1r! + 2);
  });

  it("refuses what may not be quoted: unknown, invisible, nobody, followers-only; private posts become private", async () => {
    const [alice, bob] = await Promise.all([makeUser("alice"), makeUser("bob")]);
    const missing = await post(bob, { status: "x", quoted_status_id: "123456789" });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: "The post you are trying to quote does not appear to exist." });

    const priv = (await post(alice, { status: "secret", visibility: "private" })).body;
    expect(priv.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    expect((await post(bob, { status: "x", quoted_status_id: priv.id })).status).toBe(404);

    const nobody = (await post(alice, { status: "mine only", quote_approval_policy: "nobody" })).body;
    expect(nobody.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    expect((await bob.api.get(`/api/v1/statuses/${nobody.id}`)).body.quote_approval.current_user).toBe("denied");
    expect((await post(bob, { status: "x", quoted_status_id: nobody.id })).status).toBe(404);
    // The author may always quote themselves.
    expect((await post(alice, { status: "self", quoted_status_id: nobody.id })).body.quote.state).toBe("accepted");

    const fo = (await post(alice, { status: "followers", quote_approval_policy: "followers" })).body;
    expect(fo.quote_approval.automatic).toEqual(["followers"]);
    expect((await post(bob, { status: "x", quoted_status_id: fo.id })).status).toBe(404);
    await bob.api.post(`/api/v1/accounts/${alice.id}/follow`);
    expect((await bob.api.get(`/api/v1/statuses/${fo.id}`)).body.quote_approval.current_user).toBe("automatic");
    const ok = await post(bob, { status: "ok", quoted_status_id: fo.id });
    expect(ok.body.quote?.state, JSON.stringify(ok.body)).toBe("accepted");

    // A follower may see alice's private post, but only she may quote it; her quote of it is private at most.
    const selfQuote = await post(alice, { status: "again", quoted_status_id: priv.id, visibility: "public" });
    expect(selfQuote.body.visibility).toBe("private");
    expect(selfQuote.body.quote_approval.automatic).toEqual([]);
    // A private mention quoting someone else must mention them.
    const dm = await post(bob, { status: "psst", visibility: "direct", quoted_status_id: fo.id });
    expect(dm.status).toBe(422);
    const dm2 = await post(bob, { status: "@alice psst", visibility: "direct", quoted_status_id: fo.id });
    expect(dm2.status).toBe(200);

    const bad = await post(bob, { status: "x", quote_approval_policy: "everyone" });
    expect(bad.status).toBe(422);
  });

  it("lists accepted quotes newest first with Link paging, and the author revokes one", async () => {
    const [alice, bob, carol] = await Promise.all([makeUser("alice"), makeUser("bob"), makeUser("carol")]);
    const orig = (await post(alice, { status: "quotable" })).body;
    const q1 = (await post(bob, { status: "one", quoted_status_id: orig.id })).body;
    const q2 = (await post(carol, { status: "two", quoted_status_id: orig.id })).body;
    const q3 = (await post(bob, { status: "three", quoted_status_id: orig.id })).body;

    const p1 = await alice.api.get(`/api/v1/statuses/${orig.id}/quotes?limit=2`);
    expect(p1.status).toBe(200);
    expect(p1.body.map((s: any) => s.id)).toEqual([q3.id, q2.id]);
    const next = links(p1.headers).next!;
    expect(next).toContain("max_id=");
    const p2 = await alice.api.get(next);
    expect(p2.body.map((s: any) => s.id)).toEqual([q1.id]);
    expect((await anon.get(`/api/v1/statuses/${orig.id}/quotes`)).status).toBe(401);

    queued.jobs.length = 0;
    const rev = await alice.api.post(`/api/v1/statuses/${orig.id}/quotes/${q2.id}/revoke`);
    expect(rev.status).toBe(200);
    expect(rev.body.id).toBe(q2.id);
    expect(rev.body.quote).toEqual({ state: "revoked", quoted_status: null });
    expect(federated().map((a) => a.kind)).toEqual(["revoke_quote"]);
    expect((await alice.api.get(`/api/v1/statuses/${orig.id}`)).body.quotes_count).toBe(2);
    expect((await alice.api.get(`/api/v1/statuses/${orig.id}/quotes`)).body.map((s: any) => s.id)).toEqual([q3.id, q1.id]);
    // Someone else listing them does not see quotes by accounts they block.
    await carol.api.post(`/api/v1/accounts/${bob.id}/block`);
    expect((await carol.api.get(`/api/v1/statuses/${orig.id}/quotes`)).body.map((s: any) => s.id)).toEqual([]);
    expect((await carol.api.get(`/api/v1/statuses/${q2.id}`)).body.quote.state).toBe("revoked");

    // Only the quoted author may revoke; an unknown pair is a 404.
    expect((await bob.api.post(`/api/v1/statuses/${orig.id}/quotes/${q1.id}/revoke`)).status).toBe(404);
    expect((await alice.api.post(`/api/v1/statuses/${orig.id}/quotes/${orig.id}/revoke`)).status).toBe(404);

    // Deleting the quoted status leaves the quotes showing `deleted`.
    await alice.api.delete(`/api/v1/statuses/${orig.id}`);
    expect((await bob.api.get(`/api/v1/statuses/${q1.id}`)).body.quote).toEqual({ state: "deleted", quoted_status: null });
  });

  it("block and mute states for the viewer; interaction_policy changes who may quote", async () => {
    const [alice, bob, carol] = await Promise.all([makeUser("alice"), makeUser("bob"), makeUser("carol")]);
    const orig = (await post(alice, { status: "hello" })).body;
    const q = (await post(bob, { status: "quoting", quoted_status_id: orig.id })).body;
    await carol.api.post(`/api/v1/accounts/${alice.id}/mute`);
    const muted = await carol.api.get(`/api/v1/statuses/${q.id}`);
    expect(muted.body.quote.state).toBe("muted_account");
    expect(muted.body.quote.quoted_status.id).toBe(orig.id);
    await carol.api.post(`/api/v1/accounts/${alice.id}/block`);
    expect((await carol.api.get(`/api/v1/statuses/${q.id}`)).body.quote.state).toBe("blocked_account");
    await alice.api.post(`/api/v1/accounts/${carol.id}/block`);
    expect((await carol.api.get(`/api/v1/statuses/${q.id}`)).body.quote).toEqual({ state: "unauthorized", quoted_status: null });

    const pol = await alice.api.put(`/api/v1/statuses/${orig.id}/interaction_policy`, { quote_approval_policy: "nobody" });
    expect(pol.status).toBe(200);
    expect(pol.body.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    expect((await post(bob, { status: "again", quoted_status_id: orig.id })).status).toBe(404);
    expect((await bob.api.put(`/api/v1/statuses/${orig.id}/interaction_policy`, { quote_approval_policy: "public" })).status).toBe(404);
  });

  it("editing a quoted status notifies those who quoted it (quoted_update, with their quote)", async () => {
    const [alice, bob] = await Promise.all([makeUser("alice"), makeUser("bob")]);
    const orig = (await post(alice, { status: "v1" })).body;
    const q = (await post(bob, { status: "quoting", quoted_status_id: orig.id })).body;
    const ed = await alice.api.put(`/api/v1/statuses/${orig.id}`, { status: "v2" });
    expect(ed.status).toBe(200);
    const notes = await bob.api.get("/api/v1/notifications");
    expect(notes.body.map((n: any) => [n.type, n.account.username, n.status?.id])).toEqual([["quoted_update", "alice", q.id]]);
  });
});
