import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, makeUser } from "./helpers";

describe("endpoints without features yet", () => {
  it("serves empty trends to everyone", async () => {
    for (const p of ["/api/v1/trends", "/api/v1/trends/tags", "/api/v1/trends/statuses", "/api/v1/trends/links"]) {
      const res = await anon.get(p);
      expect(res.status, p).toBe(200);
      expect(res.body, p).toEqual([]);
    }
  });

  it("answers empty lists with the right scope checks", async () => {
    const u = await makeUser();
    const cases: [string, string][] = [
      ["/api/v1/suggestions", "read:accounts"],
      ["/api/v2/suggestions", "read:accounts"],
      ["/api/v1/announcements", "read"],
      ["/api/v2/filters", "read:filters"],
      ["/api/v1/filters", "read:filters"],
      ["/api/v1/conversations", "read:statuses"],
      ["/api/v1/scheduled_statuses", "read:statuses"],
      ["/api/v1/notifications/requests", "read:notifications"],
    ];
    const wrong = await makeUser(undefined, { scopes: "write" });
    for (const [path, scope] of cases) {
      const res = await u.api.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toEqual([]);
      expect((await anon.get(path)).status, path).toBe(401);
      expect((await wrong.api.get(path)).status, path).toBe(403);
      const scoped = await makeUser(undefined, { scopes: scope });
      expect((await scoped.api.get(path)).status, `${path} with ${scope}`).toBe(200);
    }
  });

  it("404s single records that cannot exist", async () => {
    const u = await makeUser();
    expect((await u.api.get("/api/v2/filters/1")).status).toBe(404);
    expect((await u.api.post("/api/v1/announcements/1/dismiss")).status).toBe(404);
    expect((await u.api.get("/api/v1/scheduled_statuses/1")).status).toBe(404);
    expect((await u.api.delete("/api/v1/suggestions/1")).body).toEqual({});
  });

  it("has no push subscription and refuses to create one for now", async () => {
    const u = await makeUser();
    const got = await u.api.get("/api/v1/push/subscription");
    expect(got.status).toBe(404);
    expect(got.body).toEqual({ error: "Record not found" });
    expect((await u.api.post("/api/v1/push/subscription", { subscription: { endpoint: "https://push.example/x" } })).status).toBe(422);
    const noPush = await makeUser(undefined, { scopes: "read write" });
    expect((await noPush.api.get("/api/v1/push/subscription")).status).toBe(403);
    expect((await anon.get("/api/v1/push/subscription")).status).toBe(401);
  });

  it("serves a default notification policy", async () => {
    const u = await makeUser();
    const res = await u.api.get("/api/v2/notifications/policy");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      for_not_following: "accept",
      for_not_followers: "accept",
      for_new_accounts: "accept",
      for_private_mentions: "filter",
      for_limited_accounts: "filter",
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    expect((await anon.get("/api/v2/notifications/policy")).status).toBe(401);
  });
});

describe("GET /api/v1/directory", () => {
  it("lists discoverable accounts, newest or most active, without blocked ones", async () => {
    const viewer = await makeUser();
    const a = await makeUser();
    const b = await makeUser();
    const hidden = await makeUser();
    await makeUser(); // not discoverable
    const pad = (id: string) => id.padStart(20, "0");
    for (const [u, last] of [
      [a, 2000],
      [b, 1000],
      [hidden, 3000],
    ] as const) {
      await env.DB.prepare("UPDATE accounts SET discoverable = 1, last_status_at = ? WHERE id = ?").bind(last, pad(u.id)).run();
    }
    await env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES ('00000000000000000001', ?, ?, 0)")
      .bind(pad(viewer.id), pad(hidden.id))
      .run();

    const active = await viewer.api.get("/api/v1/directory?local=true");
    expect(active.status).toBe(200);
    expect(active.body.map((x: any) => x.id)).toEqual([a.id, b.id]);
    const all = await anon.get("/api/v1/directory?order=active&limit=2");
    expect(all.body.map((x: any) => x.id)).toEqual([hidden.id, a.id]);
    const offset = await anon.get("/api/v1/directory?order=active&offset=2");
    expect(offset.body.map((x: any) => x.id)).toEqual([b.id]);
    expect((await anon.get("/api/v1/directory?order=new")).body).toHaveLength(3);
  });
});
