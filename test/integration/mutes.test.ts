import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { anon, links, makeUser } from "./helpers";

describe("mute and unmute", () => {
  it("mutes forever by default, hiding notifications", async () => {
    const me = await makeUser();
    const them = await makeUser();
    const res = await me.api.post(`/api/v1/accounts/${them.id}/mute`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: them.id, muting: true, muting_notifications: true, muting_expires_at: null });
    // a muted account's follow does not notify
    await them.api.post(`/api/v1/accounts/${me.id}/follow`);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE account_id = ?").bind(padId(me.id)).first<{ n: number }>();
    expect(n?.n).toBe(0);
    const un = await me.api.post(`/api/v1/accounts/${them.id}/unmute`);
    expect(un.body).toMatchObject({ muting: false, muting_notifications: false });
  });

  it("takes a duration and notifications=false; a repeated mute updates", async () => {
    const me = await makeUser();
    const them = await makeUser();
    const before = Date.now();
    const res = await me.api.post(`/api/v1/accounts/${them.id}/mute`, { notifications: false, duration: 3600 });
    expect(res.body).toMatchObject({ muting: true, muting_notifications: false });
    const exp = Date.parse(res.body.muting_expires_at);
    expect(exp).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(exp).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    const list = await me.api.get("/api/v1/mutes");
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ id: them.id, mute_expires_at: res.body.muting_expires_at });
    const forever = await me.api.post(`/api/v1/accounts/${them.id}/mute`, new URLSearchParams({ duration: "0", notifications: "true" }), "form");
    expect(forever.body).toMatchObject({ muting: true, muting_notifications: true, muting_expires_at: null });
    expect((await me.api.post(`/api/v1/accounts/${them.id}/mute`, { duration: -5 })).status).toBe(422);
    expect((await me.api.post(`/api/v1/accounts/${them.id}/mute`, { duration: "soon" })).status).toBe(422);
  });

  it("treats an expired mute as gone", async () => {
    const me = await makeUser();
    const them = await makeUser();
    await me.api.post(`/api/v1/accounts/${them.id}/mute`, { duration: 60 });
    await env.DB.prepare("UPDATE mutes SET expires_at = 1 WHERE account_id = ?").bind(padId(me.id)).run();
    expect((await me.api.get(`/api/v1/accounts/relationships?id[]=${them.id}`)).body[0].muting).toBe(false);
    expect((await me.api.get("/api/v1/mutes")).body).toEqual([]);
  });

  it("paginates the mute list with Link headers", async () => {
    const me = await makeUser();
    const targets = [await makeUser(), await makeUser(), await makeUser()];
    for (const t of targets) await me.api.post(`/api/v1/accounts/${t.id}/mute`);
    const p1 = await me.api.get("/api/v1/mutes?limit=2");
    expect(p1.body.map((a: any) => a.id)).toEqual([targets[2].id, targets[1].id]);
    expect(p1.body[0].mute_expires_at).toBeNull();
    const p2 = await me.api.get(links(p1.headers).next!);
    expect(p2.body.map((a: any) => a.id)).toEqual([targets[0].id]);
  });

  it("refuses self, unknown ids and wrong scopes", async () => {
    const me = await makeUser();
    const them = await makeUser();
    expect((await me.api.post(`/api/v1/accounts/${me.id}/mute`)).status).toBe(403);
    expect((await me.api.post(`/api/v1/accounts/31337/mute`)).status).toBe(404);
    for (const bad of ["abc", "1e3", "99999999999999999999999"]) expect((await me.api.post(`/api/v1/accounts/${bad}/mute`)).status).toBe(404);
    expect((await anon.post(`/api/v1/accounts/${them.id}/mute`)).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read" });
    expect((await r.api.post(`/api/v1/accounts/${them.id}/mute`)).status).toBe(403);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/mutes")).status).toBe(403);
    expect((await anon.get("/api/v1/mutes")).status).toBe(401);
  });
});
