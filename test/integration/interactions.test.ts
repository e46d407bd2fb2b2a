import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobMessage } from "../../src/effects/types";
import { anon, links, makeUser, type TestUser } from "./helpers";
import { block, count, follow, pad, captureJobs } from "./statuses-fixtures";

let jobs: JobMessage[] = [];
beforeEach(() => {
  jobs = captureJobs();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function post(u: TestUser, body: Record<string, unknown>) {
  const res = await u.api.post("/api/v1/statuses", body);
  expect(res.status).toBe(200);
  return res.body.id as string;
}

describe("favourites", () => {
  it("favourite, notification, favourited_by, unfavourite", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "like me" });
    const fav = await b.api.post(`/api/v1/statuses/${id}/favourite`);
    expect(fav.status).toBe(200);
    expect(fav.body.id).toBe(id);
    expect(fav.body.favourited).toBe(true);
    expect(fav.body.favourites_count).toBe(1);
    expect(fav.headers.get("server-timing")).toMatch(/dur=3$/);
    const again = await b.api.post(`/api/v1/statuses/${id}/favourite`);
    expect(again.body.favourites_count).toBe(1);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE type = 'favourite' AND account_id = ?", pad(a.id))).toBe(1);

    const by = await anon.get(`/api/v1/statuses/${id}/favourited_by`);
    expect(by.status).toBe(200);
    expect(by.body.map((x: any) => x.id)).toEqual([b.id]);

    const un = await b.api.post(`/api/v1/statuses/${id}/unfavourite`);
    expect(un.status).toBe(200);
    expect(un.body.favourited).toBe(false);
    expect(un.body.favourites_count).toBe(0);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE type = 'favourite'")).toBe(0);
  });

  it("scopes: 401 without token, 403 with write:statuses only", async () => {
    const a = await makeUser();
    const id = await post(a, { status: "x" });
    expect((await anon.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(401);
    const w = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await w.api.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(403);
    const f = await makeUser(undefined, { scopes: "write:favourites" });
    expect((await f.api.post(`/api/v1/statuses/${id}/favourite`)).status).toBe(200);
  });

  it("unfavourite works after the author blocked the user", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "soon hidden" });
    await b.api.post(`/api/v1/statuses/${id}/favourite`);
    await block(a.id, b.id);
    expect((await b.api.get(`/api/v1/statuses/${id}`)).status).toBe(404);
    const un = await b.api.post(`/api/v1/statuses/${id}/unfavourite`);
    expect(un.status).toBe(200);
    expect(un.body.id).toBe(id);
    expect(un.body.favourited).toBe(false);
    expect(await count("SELECT count(*) AS n FROM favourites")).toBe(0);
    // without a favourite, the hidden status is still hidden
    expect((await b.api.post(`/api/v1/statuses/${id}/unfavourite`)).status).toBe(404);
  });

  it("favourited_by paginates with Link headers", async () => {
    const a = await makeUser();
    const id = await post(a, { status: "popular" });
    const fans = [];
    for (let i = 0; i < 3; i++) {
      const u = await makeUser();
      await u.api.post(`/api/v1/statuses/${id}/favourite`);
      fans.push(u);
    }
    const p1 = await anon.get(`/api/v1/statuses/${id}/favourited_by?limit=2`);
    expect(p1.body.map((x: any) => x.id)).toEqual([fans[2].id, fans[1].id]);
    const l = links(p1.headers);
    expect(l.next).toBeTruthy();
    const p2 = await anon.get(l.next!);
    expect(p2.body.map((x: any) => x.id)).toEqual([fans[0].id]);
    const prev = await anon.get(links(p2.headers).prev!);
    expect(prev.body.map((x: any) => x.id)).toEqual([fans[2].id, fans[1].id]);
  });
});

describe("B15: interactions with a status the user cannot see are 404 with no content", () => {
  it("favourite, reblog, bookmark, pin, mute, favourited_by, reblogged_by, context", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "followers only", visibility: "private" });
    for (const action of ["favourite", "reblog", "bookmark", "pin", "mute", "unmute", "unpin"]) {
      const res = await b.api.post(`/api/v1/statuses/${id}/${action}`);
      expect(res.status, action).toBe(404);
      expect(res.body).toEqual({ error: "Record not found" });
    }
    for (const path of ["favourited_by", "reblogged_by", "context", "history"]) {
      expect((await b.api.get(`/api/v1/statuses/${id}/${path}`)).status, path).toBe(404);
    }
    expect(await count("SELECT count(*) AS n FROM favourites")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM bookmarks")).toBe(0);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE reblog_of_id IS NOT NULL")).toBe(0);
  });
});

describe("reblogs", () => {
  it("reblog, reblogged_by, idempotent second reblog, unreblog", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "boost me" });
    const rb = await b.api.post(`/api/v1/statuses/${id}/reblog`, { visibility: "unlisted" });
    expect(rb.status).toBe(200);
    expect(rb.body.reblog.id).toBe(id);
    expect(rb.body.reblog.reblogged).toBe(true);
    expect(rb.body.reblog.reblogs_count).toBe(1);
    expect(rb.body.visibility).toBe("unlisted");
    expect(rb.body.account.id).toBe(b.id);
    expect(rb.body.uri).toMatch(/\/activity$/);
    expect(jobs.at(-1)).toEqual({ type: "fanout", statusId: rb.body.id });
    const twice = await b.api.post(`/api/v1/statuses/${id}/reblog`);
    expect(twice.body.id).toBe(rb.body.id);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE type = 'reblog'")).toBe(1);
    const by = await anon.get(`/api/v1/statuses/${id}/reblogged_by`);
    expect(by.body.map((x: any) => x.id)).toEqual([b.id]);
    // the reblog itself can be fetched
    expect((await anon.get(`/api/v1/statuses/${rb.body.id}`)).body.reblog.id).toBe(id);

    const un = await b.api.post(`/api/v1/statuses/${id}/unreblog`);
    expect(un.status).toBe(200);
    expect(jobs).toContainEqual({ type: "unfanout", statusId: rb.body.id, accountId: b.id, reblogOfId: id });
    expect(un.body.id).toBe(id);
    expect(un.body.reblogged).toBe(false);
    expect(un.body.reblogs_count).toBe(0);
    expect((await anon.get(`/api/v1/statuses/${rb.body.id}`)).status).toBe(404);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE type = 'reblog'")).toBe(0);
  });

  it("a boost shows the viewer's flags of the boosted status: reblogged, favourited, bookmarked, muted", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "boost me" });
    const rb = await b.api.post(`/api/v1/statuses/${id}/reblog`);
    expect(rb.body).toMatchObject({ reblogged: true, reblog: { id, reblogged: true } });
    for (const action of ["favourite", "bookmark", "mute"]) expect((await b.api.post(`/api/v1/statuses/${id}/${action}`)).status).toBe(200);
    const wrapper = await b.api.get(`/api/v1/statuses/${rb.body.id}`);
    expect(wrapper.body).toMatchObject({ reblogged: true, favourited: true, bookmarked: true, muted: true });
    expect(wrapper.body.reblog).toMatchObject({ reblogged: true, favourited: true, bookmarked: true, muted: true });
    // Someone else sees none of b's flags on b's boost.
    const c = await makeUser();
    expect((await c.api.get(`/api/v1/statuses/${rb.body.id}`)).body).toMatchObject({ reblogged: false, favourited: false, bookmarked: false, muted: false });
  });

  it("reblog of a private status is 422; the author may boost their own; direct never", async () => {
    const a = await makeUser();
    const b = await makeUser();
    await follow(b.id, a.id);
    const priv = await post(a, { status: "followers only", visibility: "private" });
    const res = await b.api.post(`/api/v1/statuses/${priv}/reblog`);
    expect(res.status).toBe(422);
    const own = await a.api.post(`/api/v1/statuses/${priv}/reblog`);
    expect(own.status).toBe(200);
    expect(own.body.visibility).toBe("private");
    const dm = await post(a, { status: `@${b.username} dm`, visibility: "direct" });
    expect((await b.api.post(`/api/v1/statuses/${dm}/reblog`)).status).toBe(422);
  });

  it("unreblog works after the author blocked the user", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "x" });
    await b.api.post(`/api/v1/statuses/${id}/reblog`);
    await block(a.id, b.id);
    const un = await b.api.post(`/api/v1/statuses/${id}/unreblog`);
    expect(un.status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE reblog_of_id IS NOT NULL")).toBe(0);
  });
});

describe("bookmarks, pins, conversation mutes", () => {
  it("bookmark and unbookmark (write:bookmarks)", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "save me" });
    const w = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await w.api.post(`/api/v1/statuses/${id}/bookmark`)).status).toBe(403);
    const bm = await b.api.post(`/api/v1/statuses/${id}/bookmark`);
    expect(bm.status).toBe(200);
    expect(bm.body.bookmarked).toBe(true);
    expect((await b.api.get(`/api/v1/statuses/${id}`)).body.bookmarked).toBe(true);
    await block(a.id, b.id);
    const un = await b.api.post(`/api/v1/statuses/${id}/unbookmark`);
    expect(un.status).toBe(200);
    expect(un.body.bookmarked).toBe(false);
    expect(await count("SELECT count(*) AS n FROM bookmarks")).toBe(0);
  });

  it("pins own statuses of any visibility, at most 5; not others' nor reblogs", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const ids = [];
    for (const visibility of ["public", "unlisted", "private", "direct", "public", "public"])
      ids.push(await post(a, { status: `p ${visibility}`, visibility }));
    for (const id of ids.slice(0, 5)) {
      const res = await a.api.post(`/api/v1/statuses/${id}/pin`);
      expect(res.status).toBe(200);
      expect(res.body.pinned).toBe(true);
    }
    expect((await a.api.post(`/api/v1/statuses/${ids[0]}/pin`)).status).toBe(200);
    const sixth = await a.api.post(`/api/v1/statuses/${ids[5]}/pin`);
    expect(sixth.status).toBe(422);
    const other = await b.api.post(`/api/v1/statuses/${ids[0]}/pin`);
    expect(other.status).toBe(422);
    const rb = await b.api.post(`/api/v1/statuses/${ids[0]}/reblog`);
    const rbOwn = await b.api.post(`/api/v1/statuses/${rb.body.id}/pin`);
    expect(rbOwn.status).toBe(422);
    const readOnly = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await readOnly.api.post(`/api/v1/statuses/${ids[0]}/pin`)).status).toBe(403);
    const un = await a.api.post(`/api/v1/statuses/${ids[0]}/unpin`);
    expect(un.status).toBe(200);
    expect(un.body.pinned).toBe(false);
    expect((await a.api.post(`/api/v1/statuses/${ids[5]}/pin`)).status).toBe(200);
  });

  it("mutes and unmutes the conversation; a status without one is a validation error", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const id = await post(a, { status: "thread" });
    const m = await b.api.post(`/api/v1/statuses/${id}/mute`);
    expect(m.status).toBe(200);
    expect(m.body.muted).toBe(true);
    expect(await count("SELECT count(*) AS n FROM conversation_mutes")).toBe(1);
    const u = await b.api.post(`/api/v1/statuses/${id}/unmute`);
    expect(u.body.muted).toBe(false);
    const w = await makeUser(undefined, { scopes: "write:statuses" });
    expect((await w.api.post(`/api/v1/statuses/${id}/mute`)).status).toBe(403);
    const { env } = await import("cloudflare:test");
    await env.DB.prepare("UPDATE statuses SET conversation_id = NULL WHERE id = ?").bind(pad(id)).run();
    const none = await b.api.post(`/api/v1/statuses/${id}/mute`);
    expect(none.status).toBe(422);
    expect(none.body.error).toMatch(/^Validation failed/);
  });
});
