import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { anon, makeUser } from "./helpers";

describe("GET /api/v1/accounts/relationships", () => {
  it("renders every field for each id, in order", async () => {
    const me = await makeUser();
    const a = await makeUser();
    const b = await makeUser();
    await me.api.post(`/api/v1/accounts/${a.id}/follow`, { notify: true });
    await b.api.post(`/api/v1/accounts/${me.id}/follow`);
    const res = await me.api.get(`/api/v1/accounts/relationships?id[]=${b.id}&id[]=${a.id}&id[]=${b.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: b.id,
        following: false,
        showing_reblogs: false,
        notifying: false,
        languages: null,
        followed_by: true,
        blocking: false,
        blocked_by: false,
        muting: false,
        muting_notifications: false,
        muting_expires_at: null,
        requested: false,
        requested_by: false,
        domain_blocking: false,
        endorsed: false,
        note: "",
      },
      expect.objectContaining({ id: a.id, following: true, showing_reblogs: true, notifying: true, followed_by: false }),
    ]);
    // id=x (no brackets) works too
    expect((await me.api.get(`/api/v1/accounts/relationships?id=${a.id}`)).body.map((r: any) => r.id)).toEqual([a.id]);
  });

  it("caps 500 ids (A18) and drops bad ones, in one round trip", async () => {
    const me = await makeUser();
    const a = await makeUser();
    const ids = [a.id, "abc", "1e3", "99999999999999999999999", ...Array.from({ length: 500 }, (_, i) => String(1000 + i))];
    const res = await me.api.get(`/api/v1/accounts/relationships?${ids.map((i) => `id[]=${i}`).join("&")}`);
    expect(res.status).toBe(200);
    expect(res.body.map((r: any) => r.id)).toEqual([a.id]);
    expect(res.headers.get("server-timing")).toContain("dur=2");
    expect((await me.api.get("/api/v1/accounts/relationships")).body).toEqual([]);
  });

  it("leaves out suspended accounts unless with_suspended=true", async () => {
    const me = await makeUser();
    const s = await makeUser();
    await env.DB.prepare("UPDATE accounts SET suspended_at = 1 WHERE id = ?").bind(padId(s.id)).run();
    expect((await me.api.get(`/api/v1/accounts/relationships?id[]=${s.id}`)).body).toEqual([]);
    expect((await me.api.get(`/api/v1/accounts/relationships?id[]=${s.id}&with_suspended=true`)).body.map((r: any) => r.id)).toEqual([s.id]);
  });

  it("shows domain blocks, blocks both ways, mutes and notes", async () => {
    const me = await makeUser();
    const them = await makeUser();
    const remoteId = "4242424242";
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?, 'bob', 'remote.example', 'https://remote.example/users/bob', 1, 1)",
    )
      .bind(padId(remoteId))
      .run();
    await me.api.post("/api/v1/domain_blocks", { domain: "Remote.Example" });
    await them.api.post(`/api/v1/accounts/${me.id}/block`);
    await me.api.post(`/api/v1/accounts/${them.id}/mute`, { notifications: false });
    await me.api.post(`/api/v1/accounts/${them.id}/note`, { comment: "hmm" });
    const res = await me.api.get(`/api/v1/accounts/relationships?id[]=${remoteId}&id[]=${them.id}`);
    expect(res.body[0]).toMatchObject({ id: remoteId, domain_blocking: true });
    expect(res.body[1]).toMatchObject({ blocked_by: true, blocking: false, muting: true, muting_notifications: false, note: "hmm" });
  });

  it("needs a user token with read:follows", async () => {
    expect((await anon.get("/api/v1/accounts/relationships?id[]=1")).status).toBe(401);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/accounts/relationships?id[]=1")).status).toBe(403);
    const f = await makeUser(undefined, { scopes: "read:follows" });
    expect((await f.api.get("/api/v1/accounts/relationships?id[]=1")).status).toBe(200);
  });
});
