import { env } from "cloudflare:test";
import { fetchMock } from "../support/fetch-mock";
import { describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { anon, links, makeUser } from "./helpers";

const BAD_IDS = ["abc", "1e3", "99999999999999999999999"];

async function notificationTypes(recipientId: string): Promise<string[]> {
  const r = await env.DB.prepare("SELECT type FROM notifications WHERE account_id = ? ORDER BY id").bind(padId(recipientId)).all<{ type: string }>();
  return r.results.map((x) => x.type);
}

async function count(sql: string, ...args: string[]): Promise<number> {
  const r = await env.DB.prepare(sql)
    .bind(...args.map(padId))
    .first<{ n: number }>();
  return r?.n ?? 0;
}

describe("POST /api/v1/accounts/:id/follow and unfollow", () => {
  it("follows an unlocked account: relationship, counters, notification", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const res = await a.api.post(`/api/v1/accounts/${b.id}/follow`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: b.id, following: true, showing_reblogs: true, notifying: false, requested: false, followed_by: false });
    expect((await anon.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(1);
    expect((await anon.get(`/api/v1/accounts/${a.id}`)).body.following_count).toBe(1);
    expect(await notificationTypes(b.id)).toEqual(["follow"]);

    const rel = await b.api.get(`/api/v1/accounts/relationships?id[]=${a.id}`);
    expect(rel.body[0]).toMatchObject({ id: a.id, following: false, followed_by: true });

    const un = await a.api.post(`/api/v1/accounts/${b.id}/unfollow`);
    expect(un.status).toBe(200);
    expect(un.body).toMatchObject({ following: false, requested: false });
    expect((await anon.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(0);
    expect(await notificationTypes(b.id)).toEqual([]);
    // unfollowing again is harmless
    expect((await a.api.post(`/api/v1/accounts/${b.id}/unfollow`)).status).toBe(200);
  });

  it("updates options on a repeated follow (reblogs=false, notify, languages)", async () => {
    const a = await makeUser();
    const b = await makeUser();
    await a.api.post(`/api/v1/accounts/${b.id}/follow`);
    const again = await a.api.post(`/api/v1/accounts/${b.id}/follow`, { reblogs: false, notify: true, languages: ["en", "de"] });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ following: true, showing_reblogs: false, notifying: true, languages: ["en", "de"] });
    expect((await anon.get(`/api/v1/accounts/${b.id}`)).body.followers_count).toBe(1);
    const form = await a.api.post(`/api/v1/accounts/${b.id}/follow`, new URLSearchParams({ reblogs: "true" }), "form");
    expect(form.body).toMatchObject({ showing_reblogs: true, notifying: true });
  });

  it("refuses self, blocked either way, and unknown or malformed ids", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const self = await a.api.post(`/api/v1/accounts/${a.id}/follow`);
    expect(self.status).toBe(403);
    expect(self.body.error).toBe("This action is not allowed");
    await b.api.post(`/api/v1/accounts/${a.id}/block`);
    expect((await a.api.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(403);
    expect((await b.api.post(`/api/v1/accounts/${a.id}/follow`)).status).toBe(403);
    expect((await a.api.post(`/api/v1/accounts/12345/follow`)).status).toBe(404);
    for (const bad of BAD_IDS) {
      const r = await a.api.post(`/api/v1/accounts/${bad}/follow`);
      expect(r.status, bad).toBe(404);
      expect(r.body).toEqual({ error: "Record not found" });
    }
  });

  it("needs a token with write:follows", async () => {
    const b = await makeUser();
    expect((await anon.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read" });
    const res = await r.api.post(`/api/v1/accounts/${b.id}/follow`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("This action is outside the authorized scopes");
    const f = await makeUser(undefined, { scopes: "follow" });
    expect((await f.api.post(`/api/v1/accounts/${b.id}/follow`)).status).toBe(200);
    expect((await r.api.post(`/api/v1/accounts/${b.id}/unfollow`)).status).toBe(403);
  });
});

describe("locked accounts and follow requests", () => {
  it("request, listed, authorize, following", async () => {
    const owner = await makeUser(undefined, { locked: true });
    const fan = await makeUser();
    const req = await fan.api.post(`/api/v1/accounts/${owner.id}/follow`, { reblogs: false });
    expect(req.status).toBe(200);
    expect(req.body).toMatchObject({ following: false, requested: true, showing_reblogs: false });
    expect(await notificationTypes(owner.id)).toEqual(["follow_request"]);
    expect((await owner.api.get("/api/v1/accounts/verify_credentials")).body.source.follow_requests_count).toBe(1);
    expect((await owner.api.get(`/api/v1/accounts/relationships?id[]=${fan.id}`)).body[0].requested_by).toBe(true);

    const list = await owner.api.get("/api/v1/follow_requests");
    expect(list.status).toBe(200);
    expect(list.body.map((a: any) => a.id)).toEqual([fan.id]);

    const ok = await owner.api.post(`/api/v1/follow_requests/${fan.id}/authorize`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: fan.id, followed_by: true, requested_by: false });
    const rel = await fan.api.get(`/api/v1/accounts/relationships?id[]=${owner.id}`);
    expect(rel.body[0]).toMatchObject({ following: true, requested: false, showing_reblogs: false });
    expect(await notificationTypes(owner.id)).toEqual([]);
    expect((await owner.api.get("/api/v1/follow_requests")).body).toEqual([]);
    expect((await owner.api.post(`/api/v1/follow_requests/${fan.id}/authorize`)).status).toBe(404);
  });

  it("reject removes the request; withdrawing via unfollow too", async () => {
    const owner = await makeUser(undefined, { locked: true });
    const fan = await makeUser();
    const other = await makeUser();
    await fan.api.post(`/api/v1/accounts/${owner.id}/follow`);
    const no = await owner.api.post(`/api/v1/follow_requests/${fan.id}/reject`);
    expect(no.status).toBe(200);
    expect(no.body).toMatchObject({ followed_by: false, requested_by: false });
    expect(await count("SELECT count(*) AS n FROM follow_requests WHERE target_account_id = ?", owner.id)).toBe(0);

    await other.api.post(`/api/v1/accounts/${owner.id}/follow`);
    const un = await other.api.post(`/api/v1/accounts/${owner.id}/unfollow`);
    expect(un.body.requested).toBe(false);
    expect(await notificationTypes(owner.id)).toEqual([]);

    expect((await owner.api.post(`/api/v1/follow_requests/abc/reject`)).status).toBe(404);
    expect((await owner.api.post(`/api/v1/follow_requests/${other.id}/reject`)).status).toBe(404);
  });

  it("paginates follow requests with Link headers, needs read:follows", async () => {
    const owner = await makeUser(undefined, { locked: true });
    const fans = [await makeUser(), await makeUser(), await makeUser()];
    for (const f of fans) await f.api.post(`/api/v1/accounts/${owner.id}/follow`);
    const p1 = await owner.api.get("/api/v1/follow_requests?limit=2");
    expect(p1.body.map((a: any) => a.id)).toEqual([fans[2].id, fans[1].id]);
    const p2 = await owner.api.get(links(p1.headers).next!);
    expect(p2.body.map((a: any) => a.id)).toEqual([fans[0].id]);
    expect(links(p2.headers).next).toBeUndefined();
    expect((await anon.get("/api/v1/follow_requests")).status).toBe(401);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/follow_requests")).status).toBe(403);
  });

  it("unlocking the account authorizes pending requests", async () => {
    const owner = await makeUser(undefined, { locked: true });
    const fans = [await makeUser(), await makeUser()];
    for (const f of fans) await f.api.post(`/api/v1/accounts/${owner.id}/follow`, { reblogs: false });
    const res = await owner.api.patch("/api/v1/accounts/update_credentials", { locked: false });
    expect(res.status).toBe(200);
    expect(res.body.locked).toBe(false);
    expect(res.body.source.follow_requests_count).toBe(0);
    expect(res.body.followers_count).toBe(2);
    for (const f of fans) {
      const rel = await f.api.get(`/api/v1/accounts/relationships?id[]=${owner.id}`);
      expect(rel.body[0]).toMatchObject({ following: true, requested: false, showing_reblogs: false });
    }
    expect((await owner.api.get("/api/v1/follow_requests")).body).toEqual([]);
  });
});

describe("POST /api/v1/follows", () => {
  it("follows by acct and is idempotent; unknown remote is 404", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const res = await a.api.post("/api/v1/follows", { uri: `${b.username}@tern.test` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: b.id, following: true });
    const again = await a.api.post("/api/v1/follows", { uri: `@${b.username}` });
    expect(again.status).toBe(200);
    expect(again.body.following).toBe(true);
    // An unknown remote handle is looked up by WebFinger; far.example (served here by fetchMock) knows nobody.
    fetchMock.activate();
    fetchMock.disableNetConnect();
    fetchMock
      .get("https://far.example")
      .intercept({ path: (p) => p.startsWith("/.well-known/webfinger") })
      .reply(404, "");
    expect((await a.api.post("/api/v1/follows", { uri: "someone@far.example" })).status).toBe(404);
    expect((await a.api.post("/api/v1/follows", {})).status).toBe(422);
    expect((await anon.post("/api/v1/follows", { uri: b.username })).status).toBe(401);
  });
});

describe("remove_from_followers", () => {
  it("makes a follower stop following", async () => {
    const me = await makeUser();
    const fan = await makeUser();
    await fan.api.post(`/api/v1/accounts/${me.id}/follow`);
    const res = await me.api.post(`/api/v1/accounts/${fan.id}/remove_from_followers`);
    expect(res.status).toBe(200);
    expect(res.body.followed_by).toBe(false);
    expect((await fan.api.get(`/api/v1/accounts/relationships?id[]=${me.id}`)).body[0].following).toBe(false);
    expect((await me.api.post(`/api/v1/accounts/1e3/remove_from_followers`)).status).toBe(404);
  });
});

describe("followers and following lists", () => {
  it("paginates with internal ids in the Link header", async () => {
    const star = await makeUser();
    const fans = [await makeUser(), await makeUser(), await makeUser()];
    for (const f of fans) await f.api.post(`/api/v1/accounts/${star.id}/follow`);
    const p1 = await anon.get(`/api/v1/accounts/${star.id}/followers?limit=2`);
    expect(p1.status).toBe(200);
    expect(p1.body.map((a: any) => a.id)).toEqual([fans[2].id, fans[1].id]);
    const next = links(p1.headers).next!;
    expect(next).toMatch(/max_id=\d+/);
    expect(next).not.toContain(`max_id=${fans[1].id}`);
    const p2 = await anon.get(next);
    expect(p2.body.map((a: any) => a.id)).toEqual([fans[0].id]);
    const prev = await anon.get(links(p2.headers).prev!);
    expect(prev.body.map((a: any) => a.id)).toEqual([fans[2].id, fans[1].id]);

    const following = await anon.get(`/api/v1/accounts/${fans[0].id}/following`);
    expect(following.body.map((a: any) => a.id)).toEqual([star.id]);
  });

  it("hide_collections hides both lists from others but not from the owner", async () => {
    const star = await makeUser();
    const fan = await makeUser();
    await fan.api.post(`/api/v1/accounts/${star.id}/follow`);
    await star.api.post(`/api/v1/accounts/${fan.id}/follow`);
    await star.api.patch("/api/v1/accounts/update_credentials", { hide_collections: true });
    expect((await anon.get(`/api/v1/accounts/${star.id}/followers`)).body).toEqual([]);
    expect((await fan.api.get(`/api/v1/accounts/${star.id}/following`)).body).toEqual([]);
    expect((await star.api.get(`/api/v1/accounts/${star.id}/followers`)).body.map((a: any) => a.id)).toEqual([fan.id]);
    expect((await star.api.get(`/api/v1/accounts/${star.id}/following`)).body.map((a: any) => a.id)).toEqual([fan.id]);
  });

  it("leaves out blocked, blocking and muted accounts; the owner still sees muted ones", async () => {
    const star = await makeUser();
    const viewer = await makeUser();
    const blockedByViewer = await makeUser();
    const blocksViewer = await makeUser();
    const muted = await makeUser();
    for (const f of [blockedByViewer, blocksViewer, muted]) await f.api.post(`/api/v1/accounts/${star.id}/follow`);
    await viewer.api.post(`/api/v1/accounts/${blockedByViewer.id}/block`);
    await blocksViewer.api.post(`/api/v1/accounts/${viewer.id}/block`);
    await viewer.api.post(`/api/v1/accounts/${muted.id}/mute`);
    await star.api.post(`/api/v1/accounts/${muted.id}/mute`);
    expect((await viewer.api.get(`/api/v1/accounts/${star.id}/followers`)).body).toEqual([]);
    const own = await star.api.get(`/api/v1/accounts/${star.id}/followers`);
    expect(own.body.map((a: any) => a.id).sort()).toEqual([blockedByViewer.id, blocksViewer.id, muted.id].sort());
  });

  it("is empty for a viewer the owner blocks; 404 for unknown or bad ids; scope checked", async () => {
    const star = await makeUser();
    const fan = await makeUser();
    const pest = await makeUser();
    await fan.api.post(`/api/v1/accounts/${star.id}/follow`);
    await star.api.post(`/api/v1/accounts/${pest.id}/block`);
    expect((await pest.api.get(`/api/v1/accounts/${star.id}/followers`)).body).toEqual([]);
    expect((await anon.get(`/api/v1/accounts/77777/followers`)).status).toBe(404);
    for (const bad of BAD_IDS) expect((await anon.get(`/api/v1/accounts/${bad}/following`)).status).toBe(404);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get(`/api/v1/accounts/${star.id}/followers`)).status).toBe(403);
  });
});

describe("feed jobs", () => {
  it("enqueues merge_feed on follow without failing the request", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const res = await a.api.post(`/api/v1/accounts/${b.id}/follow`);
    expect(res.status).toBe(200);
    expect(res.headers.get("server-timing")).toMatch(/dur=\d/);
  });
});
