import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { ORIGIN, anon, links, makeUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");

async function taggedStatus(accountId: string, tag: string, visibility = "public") {
  const now = Date.now();
  const id = snowflake(now);
  await env.DB.batch([
    env.DB.prepare("INSERT OR IGNORE INTO tags (id, name, display_name, created_at) VALUES (?, ?, ?, ?)").bind(
      pad(snowflake(now)),
      tag.toLowerCase(),
      tag,
      now,
    ),
    env.DB.prepare("INSERT INTO statuses (id, uri, account_id, local, visibility, text, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?)").bind(
      pad(id),
      `${ORIGIN}/s/${id}`,
      pad(accountId),
      visibility,
      `#${tag}`,
      now,
      now,
    ),
    env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) SELECT ?, id FROM tags WHERE name = ?").bind(pad(id), tag.toLowerCase()),
  ]);
  return id;
}

describe("GET /api/v1/tags/:name", () => {
  it("renders a used tag with 7 days of history as strings", async () => {
    const u = await makeUser();
    await taggedStatus(u.id, "Cats");
    await taggedStatus(u.id, "Cats");
    await taggedStatus(u.id, "Cats", "private");
    const res = await anon.get("/api/v1/tags/cats");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Cats", url: `${ORIGIN}/tags/cats` });
    expect(res.body.id).toMatch(/^\d+$/);
    expect(res.body.following).toBeUndefined();
    expect(res.body.history).toHaveLength(7);
    expect(res.body.history[0]).toEqual({ day: expect.stringMatching(/^\d+$/), uses: "2", accounts: "1" });
    expect(res.body.history[1].uses).toBe("0");
    expect(Number(res.body.history[0].day) % 86400).toBe(0);
    // Signed in: following and featuring appear.
    const signed = await u.api.get("/api/v1/tags/CATS");
    expect(signed.body).toMatchObject({ following: false, featuring: false });
  });

  it("answers for an unused valid tag and 404s impossible names", async () => {
    const res = await anon.get("/api/v1/tags/neverused");
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("neverused");
    expect((await anon.get("/api/v1/tags/no%20spaces")).status).toBe(404);
    expect((await anon.get("/api/v1/tags/12345")).status).toBe(404);
    expect((await anon.get(`/api/v1/tags/${"a".repeat(300)}`)).status).toBe(404);
  });
});

describe("following tags", () => {
  it("follows and unfollows, creating the tag when needed", async () => {
    const u = await makeUser();
    const f = await u.api.post("/api/v1/tags/NewTag/follow");
    expect(f.status).toBe(200);
    expect(f.body).toMatchObject({ name: "NewTag", following: true, url: `${ORIGIN}/tags/newtag` });
    expect((await u.api.post("/api/v1/tags/newtag/follow")).body.following).toBe(true);
    expect((await u.api.get("/api/v1/tags/newtag")).body.following).toBe(true);
    const list = await u.api.get("/api/v1/followed_tags");
    expect(list.body.map((t: any) => t.name)).toEqual(["NewTag"]);
    expect(list.body[0].following).toBe(true);
    const un = await u.api.post("/api/v1/tags/newtag/unfollow");
    expect(un.body.following).toBe(false);
    expect((await u.api.get("/api/v1/followed_tags")).body).toEqual([]);
    expect((await u.api.post("/api/v1/tags/bad%20tag/follow")).status).toBe(404);
  });

  it("needs write:follows to follow and read:follows to list", async () => {
    expect((await anon.post("/api/v1/tags/x/follow")).status).toBe(401);
    expect((await anon.get("/api/v1/followed_tags")).status).toBe(401);
    const ro = await makeUser(undefined, { scopes: "read" });
    expect((await ro.api.post("/api/v1/tags/x/follow")).status).toBe(403);
    expect((await ro.api.get("/api/v1/followed_tags")).status).toBe(200);
  });

  it("paginates followed tags with Link headers", async () => {
    const u = await makeUser();
    for (const t of ["a1", "b2", "c3", "d4", "e5"]) await u.api.post(`/api/v1/tags/${t}/follow`);
    const p1 = await u.api.get("/api/v1/followed_tags?limit=2");
    expect(p1.body.map((t: any) => t.name)).toEqual(["e5", "d4"]);
    const p2 = await u.api.get(links(p1.headers).next!);
    expect(p2.body.map((t: any) => t.name)).toEqual(["c3", "b2"]);
    const p3 = await u.api.get(links(p2.headers).next!);
    expect(p3.body.map((t: any) => t.name)).toEqual(["a1"]);
    const back = await u.api.get(links(p2.headers).prev!);
    expect(back.body.map((t: any) => t.name)).toEqual(["e5", "d4"]);
    // Over the maximum is clamped, not an error.
    expect((await u.api.get("/api/v1/followed_tags?limit=100000")).status).toBe(200);
  });
});

describe("featured tags", () => {
  it("creates, lists and deletes featured tags with the owner's use", async () => {
    const u = await makeUser("featurer");
    await taggedStatus(u.id, "Art");
    const c = await u.api.post("/api/v1/featured_tags", { name: "#Art" }, "form");
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ name: "Art", url: `${ORIGIN}/@featurer/tagged/art`, statuses_count: "1" });
    expect(c.body.last_status_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect((await u.api.post("/api/v1/featured_tags", { name: "art" })).status).toBe(422);
    expect((await u.api.post("/api/v1/featured_tags", { name: "not valid" })).status).toBe(422);
    const list = await u.api.get("/api/v1/featured_tags");
    expect(list.body).toHaveLength(1);
    const other = await makeUser();
    expect((await other.api.delete(`/api/v1/featured_tags/${c.body.id}`)).status).toBe(404);
    expect((await u.api.delete(`/api/v1/featured_tags/${c.body.id}`)).body).toEqual({});
    expect((await u.api.get("/api/v1/featured_tags")).body).toEqual([]);
  });

  it("allows at most 10", async () => {
    const u = await makeUser();
    for (let i = 0; i < 10; i++) expect((await u.api.post("/api/v1/featured_tags", { name: `t${i}x` })).status).toBe(200);
    expect((await u.api.post("/api/v1/featured_tags", { name: "eleventh" })).status).toBe(422);
  });

  it("features and unfeatures through /tags/:name (4.4) and suggests recently used tags", async () => {
    const u = await makeUser();
    await taggedStatus(u.id, "Birds");
    const sug = await u.api.get("/api/v1/featured_tags/suggestions");
    expect(sug.body.map((t: any) => t.name)).toEqual(["Birds"]);
    const f = await u.api.post("/api/v1/tags/birds/feature");
    expect(f.body).toMatchObject({ name: "Birds", featuring: true });
    expect((await u.api.post("/api/v1/tags/birds/feature")).status).toBe(200);
    expect((await u.api.get("/api/v1/featured_tags/suggestions")).body).toEqual([]);
    const uf = await u.api.post("/api/v1/tags/birds/unfeature");
    expect(uf.body.featuring).toBe(false);
    expect((await u.api.get("/api/v1/featured_tags")).body).toEqual([]);
    expect((await anon.get("/api/v1/featured_tags")).status).toBe(401);
  });
});
