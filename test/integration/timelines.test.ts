import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { buildApp } from "../../src/app";
import { sql, type SQL } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { directTimelineQuery, homeTimelineQuery, publicTimelineQuery, tagTimelineQuery } from "../../src/queries/statuses/feeds";
import { anon, api, db, eventually, links, makeUser, type Res } from "./helpers";
import { exec, follow, homeRows, insertStatus, nextId, pad, post } from "./feeds-fixtures";

const roundTrips = (r: Res) => Number(/dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? NaN);

/** Puts statuses straight into a feed (the fan-out itself is tested in fanout.test.ts). */
async function seedHome(accountId: string, ids: string[], authorId: string) {
  const stmt = env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?1, ?2, ?3)");
  await env.DB.batch(ids.map((id) => stmt.bind(pad(accountId), pad(id), pad(authorId))));
}

describe("home timeline", { timeout: 30000 }, () => {
  it("pages over 45 entries with Link next/prev, min_id and since_id, in 3 D1 round trips", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) ids.push(await insertStatus(a));
    await seedHome(me.id, ids, a.id);
    const newest = [...ids].reverse();

    const p1 = await me.api.get("/api/v1/timelines/home");
    expect(p1.status).toBe(200);
    expect(p1.body.map((s: any) => s.id)).toEqual(newest.slice(0, 20));
    expect(p1.body[0]).toMatchObject({ account: { id: a.id }, favourited: false, reblog: null });
    expect(roundTrips(p1)).toBeLessThanOrEqual(3);
    const l1 = links(p1.headers);
    expect(l1.next).toContain(`max_id=${newest[19]}`);
    expect(l1.prev).toContain(`min_id=${newest[0]}`);

    const p2 = await me.api.get(l1.next!);
    expect(p2.body.map((s: any) => s.id)).toEqual(newest.slice(20, 40));
    const p3 = await me.api.get(links(p2.headers).next!);
    expect(p3.body.map((s: any) => s.id)).toEqual(newest.slice(40));
    expect(links(p3.headers).next).toBeUndefined();

    const big = await me.api.get("/api/v1/timelines/home?limit=40");
    expect(big.body).toHaveLength(40);
    expect(roundTrips(big)).toBeLessThanOrEqual(3);
    expect((await me.api.get("/api/v1/timelines/home?limit=1000")).body).toHaveLength(40);

    // min_id: the page immediately newer than the cursor, newest first.
    const min = await me.api.get(`/api/v1/timelines/home?min_id=${ids[4]}&limit=3`);
    expect(min.body.map((s: any) => s.id)).toEqual([ids[7], ids[6], ids[5]]);
    const since = await me.api.get(`/api/v1/timelines/home?since_id=${ids[4]}&limit=3`);
    expect(since.body.map((s: any) => s.id)).toEqual(newest.slice(0, 3));
  });

  it("needs a token with read:statuses", async () => {
    expect((await anon.get("/api/v1/timelines/home")).status).toBe(401);
    expect((await api("nope").get("/api/v1/timelines/home")).status).toBe(401);
    const u = await makeUser(undefined, { scopes: "write" });
    expect((await u.api.get("/api/v1/timelines/home")).status).toBe(403);
    const granular = await makeUser(undefined, { scopes: "read:statuses" });
    expect((await granular.api.get("/api/v1/timelines/home")).status).toBe(200);
  });

  it("leaves out entries by authors the viewer blocks or mutes, including boosts of them", async () => {
    const [me, a, muted, booster] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const s1 = await insertStatus(a);
    const s2 = await insertStatus(muted);
    const orig = await insertStatus(muted);
    const rb = await insertStatus(booster, { reblogOf: orig });
    await seedHome(me.id, [s1, s2], a.id);
    await exec("UPDATE home_feed SET author_id = ?1 WHERE status_id = ?2", pad(muted.id), pad(s2));
    await exec(
      "INSERT INTO home_feed (account_id, status_id, reblog_of_id, author_id) VALUES (?1, ?2, ?3, ?4)",
      pad(me.id),
      pad(rb),
      pad(orig),
      pad(booster.id),
    );
    expect((await me.api.get("/api/v1/timelines/home")).body.map((s: any) => s.id)).toEqual([rb, s2, s1]);
    await exec(
      "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, created_at) VALUES (?1, ?2, ?3, 1, 0)",
      pad(nextId()),
      pad(me.id),
      pad(muted.id),
    );
    expect((await me.api.get("/api/v1/timelines/home")).body.map((s: any) => s.id)).toEqual([s1]);
  });

  it("answers 206 while a dropped feed is regenerated, then 200 with the rebuilt feed", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    await follow(me, a);
    const s = await insertStatus(a);
    const priv = await insertStatus(a, { visibility: "private" });
    const own = await insertStatus(me);
    await exec("INSERT INTO feed_states (account_id, dropped_at) VALUES (?1, ?2)", pad(me.id), Date.now() - 1000);
    const first = await me.api.get("/api/v1/timelines/home");
    expect(first.status).toBe(206);
    expect(Array.isArray(first.body)).toBe(true);
    await eventually(async () => {
      const r = await me.api.get("/api/v1/timelines/home");
      expect(r.status).toBe(200);
      expect(r.body.map((x: any) => x.id)).toEqual([own, priv, s]);
    });
    const state = await env.DB.prepare("SELECT dropped_at, regenerated_at FROM feed_states WHERE account_id = ?1").bind(pad(me.id)).first<any>();
    expect(state.dropped_at).toBeNull();
    expect(state.regenerated_at).toBeGreaterThan(0);
  });

  it("records activity at most once an hour, after the response", async () => {
    const me = await makeUser();
    await me.api.get("/api/v1/timelines/home");
    const read = () => env.DB.prepare("SELECT u.last_active_at AS t FROM users u WHERE u.account_id = ?1").bind(pad(me.id)).first<{ t: number | null }>();
    await eventually(async () => expect((await read())?.t).toBeGreaterThan(0));
    const t = (await read())!.t;
    await me.api.get("/api/v1/timelines/home");
    expect((await read())!.t).toBe(t);
  });
});

describe("public timeline", { timeout: 30000 }, () => {
  it("lists public, non-reblog statuses; local, remote and only_media filter; signed-out allowed with preview", async () => {
    const [a, b] = await Promise.all([makeUser(), makeUser()]);
    const remoteId = nextId();
    await exec(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?1, 'far', 'remote.example', 'https://remote.example/users/far', 0, 0)",
      pad(remoteId),
    );
    const pub = await insertStatus(a);
    const unl = await insertStatus(a, { visibility: "unlisted" });
    const priv = await insertStatus(a, { visibility: "private" });
    const rb = await insertStatus(b, { reblogOf: pub });
    const reply = await insertStatus(b, { inReplyTo: { id: pub, accountId: a.id } });
    const remote = await insertStatus({ id: remoteId, username: "far" }, { local: false });
    const withMedia = await insertStatus(b);
    await exec(
      "INSERT INTO media_attachments (id, account_id, status_id, type, created_at) VALUES (?1, ?2, ?3, 'image', 0)",
      pad(nextId()),
      pad(b.id),
      pad(withMedia),
    );
    const ids = (r: Res) => r.body.map((s: any) => s.id);
    const all = await anon.get("/api/v1/timelines/public?limit=40");
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(expect.arrayContaining([withMedia, remote, pub]));
    for (const hidden of [unl, priv, rb, reply]) expect(ids(all)).not.toContain(hidden);
    expect(ids(await anon.get("/api/v1/timelines/public?local=true&limit=40"))).not.toContain(remote);
    const remoteOnly = ids(await anon.get("/api/v1/timelines/public?remote=1&limit=40"));
    expect(remoteOnly).toContain(remote);
    expect(remoteOnly).not.toContain(pub);
    expect(ids(await b.api.get("/api/v1/timelines/public?only_media=true&limit=40"))).toEqual([withMedia]);
    expect((await api("bad-token").get("/api/v1/timelines/public")).status).toBe(401);
    const noRead = await makeUser(undefined, { scopes: "write" });
    expect((await noRead.api.get("/api/v1/timelines/public")).status).toBe(403);

    // A blocked author disappears for the viewer.
    await exec("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(b.id), pad(a.id));
    expect(ids(await b.api.get("/api/v1/timelines/public?limit=40"))).not.toContain(pub);
  });

  it("merges local and remote statuses into pages newest first, paging both ways", async () => {
    const a = await makeUser();
    const remoteId = nextId();
    await exec(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?1, 'mix', 'mix.example', 'https://mix.example/users/mix', 0, 0)",
      pad(remoteId),
    );
    // 30 local and 12 remote statuses, interleaved in time (ids increase in insertion order).
    const posted: string[] = [];
    for (let i = 0; i < 42; i++) posted.push(await insertStatus(i % 7 < 2 ? { id: remoteId, username: "mix" } : a, { local: !(i % 7 < 2) }));
    const newest = [...posted].reverse();
    const ids = (r: Res) => r.body.map((s: { id: string }) => s.id);
    const first = await a.api.get("/api/v1/timelines/public?limit=20");
    expect(ids(first)).toEqual(newest.slice(0, 20));
    const second = await a.api.get(`/api/v1/timelines/public?limit=20&max_id=${newest[19]}`);
    expect(ids(second)).toEqual(newest.slice(20, 40));
    // min_id: the page just above it, newest first.
    const above = await a.api.get(`/api/v1/timelines/public?limit=5&min_id=${newest[30]}`);
    expect(ids(above)).toEqual(newest.slice(25, 30));
    const since = await a.api.get(`/api/v1/timelines/public?limit=40&since_id=${newest[10]}`);
    expect(ids(since)).toEqual(newest.slice(0, 10));
  });

  it("refuses signed-out access (422) when public preview is off; a signed-in user still reads", async () => {
    const u = await makeUser();
    const app = buildApp();
    const call = async (path: string, token?: string) => {
      const ctx = createExecutionContext();
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      const res = await app.fetch(new Request(`http://tern.test${path}`, { headers }), { ...env, PUBLIC_PREVIEW: "false" }, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, body: await res.json() };
    };
    const pub = await call("/api/v1/timelines/public");
    expect(pub.status).toBe(422);
    expect(pub.body).toEqual({ error: "This method requires an authenticated user" });
    expect((await call("/api/v1/timelines/tag/cats")).status).toBe(422);
    expect((await call("/api/v1/timelines/public", u.token)).status).toBe(200);
    expect((await call("/api/v1/timelines/tag/cats", u.token)).status).toBe(200);
  });

  it("pages with Link headers", async () => {
    const a = await makeUser();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await insertStatus(a));
    const p1 = await anon.get("/api/v1/timelines/public?local=true&limit=2");
    expect(p1.body.map((s: any) => s.id)).toEqual([made[4], made[3]]);
    const p2 = await anon.get(links(p1.headers).next!);
    expect(p2.body.map((s: any) => s.id)).toEqual([made[2], made[1]]);
    const prev = await anon.get(links(p2.headers).prev!);
    expect(prev.body.map((s: any) => s.id)).toEqual([made[4], made[3]]);
  });

  it("reads pages through ordered indexes, never scanning a table", async () => {
    const plan = async (q: { query: SQL }) => (await db().all<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${q.query}`)).map((r) => r.detail);
    const page = { limit: 20, maxId: "1000000000" };
    const scans = (lines: string[]) => lines.filter((l) => /^SCAN (?!\(|CONSTANT|json_each)/.test(l));
    const home = await plan(homeTimelineQuery("5", page));
    // home_feed is clustered on (account_id, status_id) (a WITHOUT ROWID table): the page is a range of its key.
    expect(home.join("\n")).toMatch(/SEARCH h USING PRIMARY KEY \(account_id=\? AND status_id<\?\)/);
    expect(home.join("\n")).not.toContain("TEMP B-TREE");
    const pub = await plan(publicTimelineQuery("5", { languages: ["en"] }, page));
    expect(pub.join("\n")).toContain("statuses_public");
    expect(scans(pub)).toEqual([]);
    // only_media walks the attachments by status instead, newest first (no sort), each status found by its id.
    const media = await plan(publicTimelineQuery("5", { onlyMedia: true, local: true, languages: ["en"] }, page));
    expect(media.join("\n")).toMatch(/SEARCH ma USING COVERING INDEX media_status \(status_id>\? AND status_id<\?\)/);
    expect(media.join("\n")).toMatch(/SEARCH s USING INDEX (sqlite_autoindex_statuses_1|statuses_public) \((visibility=\? AND local=\? AND )?id=\?\)/);
    expect(media.join("\n")).not.toContain("TEMP B-TREE FOR ORDER BY");
    expect(scans(media)).toEqual([]);
    const tag = await plan(tagTimelineQuery(null, { tag: "cats", any: ["dogs"], all: ["x"], none: ["y"] }, page));
    expect(tag.join("\n")).toContain("status_tags_tag");
    expect(scans(tag)).toEqual([]);
    const direct = await plan(directTimelineQuery("5", page));
    expect(direct.join("\n")).toContain("mentions_account");
    expect(scans(direct)).toEqual([]);
    for (const p of [home, pub, media, tag, direct]) expect(p.join("\n")).not.toMatch(/SCAN (statuses|home_feed|status_tags|mentions)\b/);
  });
});

describe("hashtag, list and direct timelines", { timeout: 30000 }, () => {
  it("tag timeline with any[], all[], none[] and local", async () => {
    const a = await makeUser();
    const tag = async (name: string) => {
      const id = nextId();
      await exec("INSERT INTO tags (id, name, display_name, created_at) VALUES (?1, ?2, ?2, 0)", pad(id), name);
      return id;
    };
    const [cats, dogs, birds] = [await tag("cats"), await tag("dogs"), await tag("birds")];
    const tagged = async (...tagIds: string[]) => {
      const s = await insertStatus(a);
      for (const t of tagIds) await exec("INSERT INTO status_tags (status_id, tag_id) VALUES (?1, ?2)", pad(s), pad(t));
      return s;
    };
    const c = await tagged(cats);
    const cd = await tagged(cats, dogs);
    const d = await tagged(dogs);
    const b = await tagged(birds);
    const priv = await insertStatus(a, { visibility: "private" });
    await exec("INSERT INTO status_tags (status_id, tag_id) VALUES (?1, ?2)", pad(priv), pad(cats));
    const ids = async (q: string) => (await anon.get(q)).body.map((s: any) => s.id);
    expect(await ids("/api/v1/timelines/tag/Cats")).toEqual([cd, c]);
    expect(await ids("/api/v1/timelines/tag/cats?any[]=dogs&any[]=birds")).toEqual([b, d, cd, c]);
    expect(await ids("/api/v1/timelines/tag/cats?all[]=dogs")).toEqual([cd]);
    expect(await ids("/api/v1/timelines/tag/cats?none[]=dogs")).toEqual([c]);
    expect(await ids("/api/v1/timelines/tag/cats?remote=true")).toEqual([]);
    expect(await ids("/api/v1/timelines/tag/unknowntag")).toEqual([]);
    expect(await ids("/api/v1/timelines/tag/cats?only_media=1")).toEqual([]);
  });

  it("list timeline: own lists only", async () => {
    const [me, other, a] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const listId = nextId();
    await exec("INSERT INTO lists (id, account_id, title, created_at) VALUES (?1, ?2, 'l', 0)", pad(listId), pad(me.id));
    const s = await insertStatus(a);
    await exec("INSERT INTO list_feed (list_id, status_id, author_id) VALUES (?1, ?2, ?3)", pad(listId), pad(s), pad(a.id));
    const r = await me.api.get(`/api/v1/timelines/list/${listId}`);
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.id)).toEqual([s]);
    expect((await other.api.get(`/api/v1/timelines/list/${listId}`)).status).toBe(404);
    expect((await me.api.get(`/api/v1/timelines/list/abc`)).status).toBe(404);
    expect((await me.api.get(`/api/v1/timelines/list/${nextId()}`)).status).toBe(404);
    expect((await anon.get(`/api/v1/timelines/list/${listId}`)).status).toBe(401);
  });

  it("direct timeline: direct statuses sent and received", async () => {
    const [me, a, c] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const sent = await insertStatus(me, { visibility: "direct", mentions: [a.id] });
    const got = await insertStatus(a, { visibility: "direct", mentions: [me.id] });
    await insertStatus(a, { visibility: "direct", mentions: [c.id] });
    await insertStatus(me, { visibility: "public" });
    const r = await me.api.get("/api/v1/timelines/direct");
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.id)).toEqual([got, sent]);
    expect((await anon.get("/api/v1/timelines/direct")).status).toBe(401);
  });

  it("POST /api/v1/statuses fans out; deleting it takes it out of feeds", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    await follow(me, a);
    const posted = await a.api.post("/api/v1/statuses", { status: "hello followers", visibility: "private" });
    expect(posted.status).toBeLessThan(300);
    await eventually(async () => expect((await me.api.get("/api/v1/timelines/home")).body.map((x: any) => x.id)).toEqual([posted.body.id]));
    expect((await a.api.delete(`/api/v1/statuses/${posted.body.id}`)).status).toBeLessThan(300);
    await eventually(async () => expect(await homeRows(me.id)).toEqual([]));
  });

  it("a posted status reaches a follower's home timeline through the queue", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    await follow(me, a);
    const s = await post(a, { visibility: "private" });
    await eventually(async () => expect(await homeRows(a.id)).toContain(s));
    await eventually(async () => expect((await me.api.get("/api/v1/timelines/home")).body.map((x: any) => x.id)).toEqual([s]));
  });
});
