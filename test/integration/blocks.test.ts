import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId } from "../../src/lib/text/ids";
import { anon, links, makeUser } from "./helpers";

describe("block and unblock", () => {
  it("removes follows both ways and pending requests", async () => {
    const me = await makeUser();
    const them = await makeUser(undefined, { locked: true });
    const other = await makeUser();
    await them.api.post(`/api/v1/accounts/${me.id}/follow`);
    await other.api.post(`/api/v1/accounts/${me.id}/follow`);
    expect((await me.api.post(`/api/v1/accounts/${them.id}/follow`)).body.requested).toBe(true); // them is locked
    const res = await me.api.post(`/api/v1/accounts/${them.id}/block`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: them.id, blocking: true, following: false, followed_by: false, requested: false });
    expect((await anon.get(`/api/v1/accounts/${me.id}`)).body.followers_count).toBe(1);
    expect((await them.api.get("/api/v1/follow_requests")).body).toEqual([]);
    expect((await them.api.get(`/api/v1/accounts/relationships?id[]=${me.id}`)).body[0]).toMatchObject({ blocked_by: true, following: false });
    const n = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE account_id = ? AND from_account_id = ?")
      .bind(padId(me.id), padId(them.id))
      .first<{ n: number }>();
    expect(n?.n).toBe(0);
    // blocking twice is fine; the block is listed
    expect((await me.api.post(`/api/v1/accounts/${them.id}/block`)).status).toBe(200);
    expect((await me.api.get("/api/v1/blocks")).body.map((a: any) => a.id)).toEqual([them.id]);

    const un = await me.api.post(`/api/v1/accounts/${them.id}/unblock`);
    expect(un.status).toBe(200);
    expect(un.body.blocking).toBe(false);
    expect((await me.api.get("/api/v1/blocks")).body).toEqual([]);
  });

  it("refuses self, unknown and bad ids, and wrong scopes", async () => {
    const me = await makeUser();
    const them = await makeUser();
    expect((await me.api.post(`/api/v1/accounts/${me.id}/block`)).status).toBe(403);
    expect((await me.api.post(`/api/v1/accounts/5555/block`)).status).toBe(404);
    for (const bad of ["abc", "1e3", "99999999999999999999999"]) {
      expect((await me.api.post(`/api/v1/accounts/${bad}/block`)).status).toBe(404);
      expect((await me.api.post(`/api/v1/accounts/${bad}/unblock`)).status).toBe(404);
    }
    expect((await anon.post(`/api/v1/accounts/${them.id}/block`)).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read write:follows" });
    expect((await r.api.post(`/api/v1/accounts/${them.id}/block`)).status).toBe(403);
    expect((await r.api.get("/api/v1/blocks")).status).toBe(200);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/blocks")).status).toBe(403);
    expect((await anon.get("/api/v1/blocks")).status).toBe(401);
  });

  it("paginates the block list by block row id", async () => {
    const me = await makeUser();
    const targets = [await makeUser(), await makeUser(), await makeUser()];
    for (const t of targets) await me.api.post(`/api/v1/accounts/${t.id}/block`);
    const p1 = await me.api.get("/api/v1/blocks?limit=2");
    expect(p1.body.map((a: any) => a.id)).toEqual([targets[2].id, targets[1].id]);
    const p2 = await me.api.get(links(p1.headers).next!);
    expect(p2.body.map((a: any) => a.id)).toEqual([targets[0].id]);
    const prev = await me.api.get(links(p2.headers).prev!);
    expect(prev.body.map((a: any) => a.id)).toEqual([targets[2].id, targets[1].id]);
  });
});

describe("/api/v1/domain_blocks", () => {
  it("blocks, lists (lower-cased) and unblocks domains", async () => {
    const me = await makeUser();
    expect((await me.api.post("/api/v1/domain_blocks", { domain: "Spam.Example" })).status).toBe(200);
    expect((await me.api.post("/api/v1/domain_blocks", new URLSearchParams({ domain: "b.example" }), "form")).status).toBe(200);
    expect((await me.api.post("/api/v1/domain_blocks", { domain: "spam.example" })).status).toBe(200);
    const list = await me.api.get("/api/v1/domain_blocks");
    expect(list.status).toBe(200);
    expect(list.body).toEqual(["b.example", "spam.example"]);
    const p1 = await me.api.get("/api/v1/domain_blocks?limit=1");
    expect(p1.body).toEqual(["b.example"]);
    expect((await me.api.get(links(p1.headers).next!)).body).toEqual(["spam.example"]);
    expect((await me.api.delete("/api/v1/domain_blocks?domain=spam.example")).status).toBe(200);
    expect((await me.api.get("/api/v1/domain_blocks")).body).toEqual(["b.example"]);
  });

  it("refuses invalid domains with 422", async () => {
    const me = await makeUser();
    for (const domain of ["", "not a domain", "evil.example/path", "user@evil.example", "%", "'); DROP TABLE accounts;--", "x".repeat(300)]) {
      const res = await me.api.post("/api/v1/domain_blocks", { domain });
      expect(res.status, domain.slice(0, 20)).toBe(422);
    }
    expect((await me.api.post("/api/v1/domain_blocks", {})).status).toBe(422);
  });

  it("removes followers from the blocked domain", async () => {
    const me = await makeUser();
    const remoteId = "5151515151";
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, created_at, updated_at) VALUES (?, 'eve', 'evil.example', 'https://evil.example/users/eve', 1, 1)",
    )
      .bind(padId(remoteId))
      .run();
    await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, 1)")
      .bind(padId("77"), padId(remoteId), padId(me.id))
      .run();
    expect((await anon.get(`/api/v1/accounts/${me.id}`)).body.followers_count).toBe(1);
    await me.api.post("/api/v1/domain_blocks", { domain: "evil.example" });
    expect((await anon.get(`/api/v1/accounts/${me.id}`)).body.followers_count).toBe(0);
  });

  it("needs the block scopes", async () => {
    expect((await anon.get("/api/v1/domain_blocks")).status).toBe(401);
    const r = await makeUser(undefined, { scopes: "read" });
    expect((await r.api.post("/api/v1/domain_blocks", { domain: "a.example" })).status).toBe(403);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/domain_blocks")).status).toBe(403);
  });
});
