// Account streams (user, list, direct) get a status rendered ONCE by the publisher for every follower, completed by
// each account's hub for its viewer (src/streaming/status-parts.ts, viewer-state.ts accountPayloadFor), as Mastodon's
// StatusCacheHydrator does. What each viewer receives must still be exactly what REST shows that viewer: these tests
// compare the stream's payload with GET /api/v1/statuses/:id as the same viewer.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { createDb } from "../../src/db/client";
import { countingD1 } from "../../src/lib/limits/d1-counter";
import type { HubItem, Routed } from "../../src/streaming/protocol";
import { publishStatus, publishStatusUpdate } from "../../src/streaming/publish";
import { Router } from "../../src/streaming/router";
import { cfg, db, makeUser, type TestUser } from "./helpers";
import { follow, insertStatus } from "./feeds-fixtures";
import { fanOutAndPublish, itStreams, payloadOf, ws, type WsClient } from "./streaming-fixtures";

const pad = (id: string) => id.padStart(20, "0");

/** The next update's payload on `c`, checked to be status `id`'s. */
async function nextStatus(c: WsClient, id: string): Promise<Record<string, unknown>> {
  const m = await c.next();
  expect(m.event).toBe("update");
  const s = payloadOf(m);
  expect(s.id).toBe(id);
  return s;
}

async function restAs(u: TestUser, id: string) {
  const r = await u.api.get(`/api/v1/statuses/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

describe("account streams: rendered once, completed per viewer", () => {
  itStreams("a boost of a poll: each follower gets what REST shows them (favourited, bookmarked, votes, muted, filtered)", async () => {
    const [author, booster, f1, f2] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await Promise.all([follow(f1, booster), follow(f2, booster)]);
    const posted = await author.api.post("/api/v1/statuses", { status: "a fox poll", poll: { options: ["red", "blue"], expires_in: 3600 } });
    expect(posted.status).toBe(200);
    const x = posted.body.id as string;
    // f1 has done everything with it; f2 nothing.
    expect((await f1.api.post(`/api/v1/statuses/${x}/favourite`)).status).toBe(200);
    expect((await f1.api.post(`/api/v1/statuses/${x}/bookmark`)).status).toBe(200);
    expect((await f1.api.post(`/api/v1/polls/${posted.body.poll.id}/votes`, { choices: [1] })).status).toBe(200);
    const conv = await env.DB.prepare("SELECT conversation_id AS c FROM statuses WHERE id = ?").bind(pad(x)).first<{ c: string | null }>();
    if (conv?.c) await env.DB.prepare("INSERT INTO conversation_mutes (account_id, conversation_id) VALUES (?, ?)").bind(pad(f1.id), conv.c).run();
    const warn = await f1.api.post("/api/v2/filters", { title: "foxes", context: ["home"], filter_action: "warn", keywords_attributes: [{ keyword: "fox" }] });
    expect(warn.status).toBe(200);
    const c1 = await ws({ token: f1.token }, { stream: "user" });
    const c2 = await ws({ token: f2.token }, { stream: "user" });
    const boost = await insertStatus(booster, { reblogOf: x });
    await fanOutAndPublish(boost);
    const s1 = await nextStatus(c1, boost);
    const s2 = await nextStatus(c2, boost);
    expect(s1).toEqual(await restAs(f1, boost));
    expect(s2).toEqual(await restAs(f2, boost));
    // What makes them differ is there, for the boost and the boosted status.
    const r1 = s1.reblog as Record<string, unknown>;
    expect(r1).toMatchObject({ favourited: true, bookmarked: true, poll: { voted: true, own_votes: [1] } });
    expect((r1.filtered as unknown[]).length).toBe(1);
    expect(s1).toMatchObject({ favourited: true, bookmarked: true });
    expect(s2).toMatchObject({ favourited: false, bookmarked: false, filtered: [], reblog: { favourited: false, poll: { voted: false, own_votes: [] } } });
    if (conv?.c) expect(r1.muted).toBe(true);
  });

  itStreams("hide filters, quote approval by followers, the author's own status and a blocking author, per viewer", async () => {
    const [author, fan, other, blocked] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await Promise.all([follow(fan, author), follow(other, author)]);
    const hide = await other.api.post("/api/v2/filters", {
      title: "no",
      context: ["home"],
      filter_action: "hide",
      keywords_attributes: [{ keyword: "secret" }],
    });
    expect(hide.status).toBe(200);
    const ca = await ws({ token: author.token }, { stream: "user" });
    const cf = await ws({ token: fan.token }, { stream: "user" });
    const co = await ws({ token: other.token }, { stream: "user" });
    const cb = await ws({ token: blocked.token }, { stream: "user" });
    await env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(pad(String(Date.now())), pad(author.id), pad(blocked.id), Date.now())
      .run();

    // Quotable by followers (automatic): `current_user` is the viewer's own answer. All written before any is streamed,
    // so that REST, read later, counts the same statuses.
    const secret = await insertStatus(author, { text: "a secret" });
    const after = await insertStatus(author, { text: "plain" });
    const next = await insertStatus(fan);
    await env.DB.prepare("UPDATE statuses SET quote_approval_policy = ? WHERE id = ?")
      .bind(4 << 16, pad(secret))
      .run();
    // Delivered to every feed the caller names (blocked's too: the hub must still leave it out, as REST would).
    const to = { homeAccountIds: [author.id, fan.id, other.id, blocked.id], lists: [], shared: false };
    await publishStatus(db(), env, cfg(), secret, to);
    await publishStatus(db(), env, cfg(), after, to);

    const own = await nextStatus(ca, secret);
    expect(own).toEqual(await restAs(author, secret));
    expect(own).toMatchObject({ pinned: false, quote_approval: { current_user: "automatic" } });
    const fanSees = await nextStatus(cf, secret);
    expect(fanSees).toEqual(await restAs(fan, secret));
    expect(fanSees).toMatchObject({ quote_approval: { current_user: "automatic" } });
    // `other` follows too, but hides "secret" at home: the next thing it gets is the plain one.
    expect(await nextStatus(co, after)).toEqual(await restAs(other, after));
    // Blocked by the author: REST answers 404, and the stream shows neither.
    expect((await blocked.api.get(`/api/v1/statuses/${secret}`)).status).toBe(404);
    await publishStatus(db(), env, cfg(), next, { homeAccountIds: [blocked.id], lists: [], shared: false });
    expect(payloadOf(await cb.next()).id).toBe(next);
    expect(await nextStatus(ca, after)).toEqual(await restAs(author, after));
  });

  itStreams("a private status reaches followers and those it mentions; an edit leaves out a feed whose owner stopped following", async () => {
    const [author, fan, named, gone] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await Promise.all([follow(fan, author), follow(gone, author)]);
    const cf = await ws({ token: fan.token }, { stream: "user" });
    const cn = await ws({ token: named.token }, { stream: "user" });
    const cg = await ws({ token: gone.token }, { stream: "user" });
    const priv = await insertStatus(author, { visibility: "private", mentions: [named.id] });
    const later = await insertStatus(fan);
    const to = { homeAccountIds: [fan.id, named.id, gone.id], lists: [], shared: false };
    await publishStatus(db(), env, cfg(), priv, to);
    expect(await nextStatus(cf, priv)).toEqual(await restAs(fan, priv));
    expect(await nextStatus(cn, priv)).toEqual(await restAs(named, priv));
    expect(await nextStatus(cg, priv)).toEqual(await restAs(gone, priv));
    // `gone` unfollows; its feed row stays here (as if removing it had not happened yet): REST now answers 404, and
    // the edit's status.update does not reach it, while the others get it.
    await env.DB.prepare("DELETE FROM follows WHERE account_id = ? AND target_account_id = ?").bind(pad(gone.id), pad(author.id)).run();
    expect((await gone.api.get(`/api/v1/statuses/${priv}`)).status).toBe(404);
    const a = pad(author.id);
    await env.DB.prepare("INSERT INTO home_feed (account_id, status_id, reblog_of_id, author_id) VALUES (?, ?, NULL, ?), (?, ?, NULL, ?), (?, ?, NULL, ?)")
      .bind(pad(fan.id), pad(priv), a, pad(named.id), pad(priv), a, pad(gone.id), pad(priv), a)
      .run();
    await publishStatusUpdate(db(), env, cfg(), priv);
    await publishStatus(db(), env, cfg(), later, { homeAccountIds: [fan.id, named.id, gone.id], lists: [], shared: false });
    for (const c of [cf, cn]) expect((await c.next()).event).toBe("status.update");
    expect(payloadOf(await cg.next()).id).toBe(later);
  });

  itStreams("one D1 round trip for the publisher however many followers listen, each getting its REST rendering", async () => {
    const author = await makeUser();
    const fans = await Promise.all(Array.from({ length: 6 }, () => makeUser()));
    await Promise.all(fans.map((f) => follow(f, author)));
    const clients = await Promise.all(fans.map((f) => ws({ token: f.token }, { stream: "user" })));
    const warm = await insertStatus(author);
    await fanOutAndPublish(warm);
    for (const c of clients) await nextStatus(c, warm);
    const id = await insertStatus(author);
    const counter = { n: 0 };
    await publishStatus(createDb(countingD1(env.DB, counter)), env, cfg(), id, { homeAccountIds: fans.map((f) => f.id), lists: [], shared: false });
    expect(counter.n).toBe(1);
    for (const [i, c] of clients.entries()) expect(await nextStatus(c, id)).toEqual(await restAs(fans[i]!, id));
  });

  itStreams("a publish whose rendering read fails delivers nothing and throws (the job is retried), and the next one arrives", async () => {
    const [author, fan] = await Promise.all([makeUser(), makeUser()]);
    await follow(fan, author);
    const c = await ws({ token: fan.token }, { stream: "user" });
    const warm = await insertStatus(author);
    await fanOutAndPublish(warm);
    await nextStatus(c, warm);
    const failing = createDb({
      ...env.DB,
      prepare: (q: string) => env.DB.prepare(q),
      batch: async () => {
        throw new Error("D1 unavailable");
      },
    } as unknown as D1Database);
    const lost = await insertStatus(author);
    await expect(publishStatus(failing, env, cfg(), lost, { homeAccountIds: [fan.id], lists: [], shared: false })).rejects.toThrow(/D1 unavailable/);
    await publishStatus(db(), env, cfg(), lost, { homeAccountIds: [fan.id], lists: [], shared: false });
    expect(await nextStatus(c, lost)).toEqual(await restAs(fan, lost));
  });
});

describe("router: deliveries to a busy hub are coalesced", () => {
  it("what is published while a hub's delivery is in flight goes in ONE next delivery, in order; each publish resolves once delivered", async () => {
    const calls: string[][] = [];
    const gates: (() => void)[] = [];
    const storage = { list: async () => new Map(), put: async () => {}, delete: async () => {} } as unknown as DurableObjectStorage;
    const router = new Router(storage, () => ({
      deliver: async (items: HubItem[]) => {
        calls.push(items.map((i) => (i.envelope.kind === "raw" ? (i.envelope.payload ?? "") : "")));
        await new Promise<void>((r) => gates.push(r));
        return { keys: [], version: Date.now() * 1000 + calls.length };
      },
    }));
    await router.setHub("user:1", [], 1);
    const ev = (p: string): Routed => ({ envelope: { kind: "raw", event: "delete", payload: p }, accounts: [{ id: "1", keys: ["user"] }] });
    const done: string[] = [];
    const first = router.publish([ev("a")]).then(() => done.push("a"));
    await vi.waitFor(() => expect(calls.length).toBe(1));
    const second = router.publish([ev("b")]).then(() => done.push("b"));
    const third = router.publish([ev("c"), ev("d")]).then(() => done.push("c"));
    expect(calls).toEqual([["a"]]);
    gates.shift()!();
    await first;
    await vi.waitFor(() => expect(calls.length).toBe(2));
    expect(calls[1]).toEqual(["b", "c", "d"]);
    expect(done).toEqual(["a"]);
    gates.shift()!();
    await Promise.all([second, third]);
    expect(done).toEqual(["a", "b", "c"]);
    // An idle hub gets the next publish at once, alone.
    const fourth = router.publish([ev("e")]);
    await vi.waitFor(() => expect(calls.length).toBe(3));
    expect(calls[2]).toEqual(["e"]);
    gates.shift()!();
    await fourth;
  });

  it("a delivery that fails resolves its publishes (the hub keeps its entry) and the next one is still sent", async () => {
    const calls: number[] = [];
    const storage = { list: async () => new Map(), put: async () => {}, delete: async () => {} } as unknown as DurableObjectStorage;
    const router = new Router(storage, () => ({
      deliver: async (items: HubItem[]) => {
        calls.push(items.length);
        if (calls.length === 1) throw new Error("hub unreachable");
        return { keys: [], version: Date.now() * 1000 + calls.length };
      },
    }));
    await router.setHub("user:1", [], 1);
    const ev: Routed = { envelope: { kind: "raw", event: "delete", payload: "x" }, accounts: [{ id: "1", keys: ["user"] }] };
    await router.publish([ev]);
    await router.publish([ev, ev]);
    expect(calls).toEqual([1, 2]);
  });
});
