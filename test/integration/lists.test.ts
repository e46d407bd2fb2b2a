import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { anon, links, makeUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");

async function follow(a: string, b: string) {
  await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)")
    .bind(pad(snowflake()), pad(a), pad(b), Date.now())
    .run();
}

describe("lists CRUD", () => {
  it("creates, reads, updates and deletes a list", async () => {
    const u = await makeUser();
    const created = await u.api.post("/api/v1/lists", { title: "Friends", replies_policy: "followed", exclusive: true });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^\d+$/), title: "Friends", replies_policy: "followed", exclusive: true });
    const id = created.body.id;

    const dflt = await u.api.post("/api/v1/lists", { title: "Defaults" }, "form");
    expect(dflt.body).toMatchObject({ replies_policy: "list", exclusive: false });

    expect((await u.api.get(`/api/v1/lists/${id}`)).body.title).toBe("Friends");
    const all = await u.api.get("/api/v1/lists");
    expect(all.body.map((l: any) => l.title)).toEqual(["Defaults", "Friends"]);

    const upd = await u.api.put(`/api/v1/lists/${id}`, { title: "Close friends", exclusive: "false" });
    expect(upd.status).toBe(200);
    expect(upd.body).toEqual({ id, title: "Close friends", replies_policy: "followed", exclusive: false });

    expect((await u.api.delete(`/api/v1/lists/${id}`)).body).toEqual({});
    expect((await u.api.get(`/api/v1/lists/${id}`)).status).toBe(404);
    expect((await u.api.delete(`/api/v1/lists/${id}`)).status).toBe(404);
  });

  it("validates title and replies_policy (A22, spec: client error)", async () => {
    const u = await makeUser();
    expect((await u.api.post("/api/v1/lists", {})).status).toBe(422);
    expect((await u.api.post("/api/v1/lists", { title: "   " })).status).toBe(422);
    expect((await u.api.post("/api/v1/lists", { title: "x".repeat(101) })).status).toBe(422);
    const huge = await u.api.post("/api/v1/lists", { title: "x".repeat(100_000) });
    expect(huge.status).toBe(422);
    expect(huge.body.error).toMatch(/^Validation failed/);
    expect((await u.api.post("/api/v1/lists", { title: "ok", replies_policy: "everyone" })).status).toBe(422);
    expect((await u.api.post("/api/v1/lists", { title: ["a", "b"] })).status).toBe(422);
    const l = await u.api.post("/api/v1/lists", { title: "ok" });
    expect((await u.api.put(`/api/v1/lists/${l.body.id}`, { replies_policy: "bogus" })).status).toBe(422);
    const sqlText = "'); DROP TABLE lists;--";
    const inj = await u.api.post("/api/v1/lists", { title: sqlText });
    expect(inj.body.title).toBe(sqlText);
  });

  it("allows 50 lists and refuses the 51st", async () => {
    const u = await makeUser();
    const stmts = [];
    for (let i = 0; i < 50; i++) {
      stmts.push(
        env.DB.prepare("INSERT INTO lists (id, account_id, title, replies_policy, exclusive, created_at) VALUES (?, ?, ?, 'list', 0, 0)").bind(
          pad(snowflake()),
          pad(u.id),
          `L${i}`,
        ),
      );
    }
    await env.DB.batch(stmts);
    const res = await u.api.post("/api/v1/lists", { title: "one too many" });
    expect(res.status).toBe(422);
    expect((await u.api.get("/api/v1/lists")).body).toHaveLength(50);
  });

  it("hides other users' lists (B14)", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const l = (await a.api.post("/api/v1/lists", { title: "Mine" })).body;
    expect((await b.api.get(`/api/v1/lists/${l.id}`)).status).toBe(404);
    expect((await b.api.put(`/api/v1/lists/${l.id}`, { title: "pwned" })).status).toBe(404);
    expect((await b.api.delete(`/api/v1/lists/${l.id}`)).status).toBe(404);
    expect((await b.api.get(`/api/v1/lists/${l.id}/accounts`)).status).toBe(404);
    expect((await b.api.post(`/api/v1/lists/${l.id}/accounts`, { account_ids: [a.id] })).status).toBe(404);
    expect((await b.api.delete(`/api/v1/lists/${l.id}/accounts`, { account_ids: [a.id] })).status).toBe(404);
    expect((await b.api.get("/api/v1/lists")).body).toEqual([]);
    expect((await a.api.get(`/api/v1/lists/${l.id}`)).body.title).toBe("Mine");
    expect((await a.api.get("/api/v1/lists/notanid")).status).toBe(404);
  });

  it("needs a token with the lists scopes", async () => {
    expect((await anon.get("/api/v1/lists")).status).toBe(401);
    expect((await anon.post("/api/v1/lists", { title: "x" })).status).toBe(401);
    const ro = await makeUser(undefined, { scopes: "read" });
    expect((await ro.api.get("/api/v1/lists")).status).toBe(200);
    expect((await ro.api.post("/api/v1/lists", { title: "x" })).status).toBe(403);
    const other = await makeUser(undefined, { scopes: "read:accounts write:statuses" });
    expect((await other.api.get("/api/v1/lists")).status).toBe(403);
  });
});

describe("list members", () => {
  it("adds only followed accounts, lists and removes them", async () => {
    const owner = await makeUser();
    const x = await makeUser();
    const y = await makeUser();
    const stranger = await makeUser();
    await follow(owner.id, x.id);
    await follow(owner.id, y.id);
    const l = (await owner.api.post("/api/v1/lists", { title: "L" })).body;

    const bad = await owner.api.post(`/api/v1/lists/${l.id}/accounts`, { account_ids: [x.id, stranger.id] });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("Validation failed: Account has not been followed");
    expect((await owner.api.get(`/api/v1/lists/${l.id}/accounts`)).body).toEqual([]);
    expect((await owner.api.post(`/api/v1/lists/${l.id}/accounts`, { account_ids: ["999999"] })).status).toBe(404);

    const ok = await owner.api.post(
      `/api/v1/lists/${l.id}/accounts`,
      new URLSearchParams([
        ["account_ids[]", x.id],
        ["account_ids[]", y.id],
      ]),
      "form",
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({});
    // Adding again is harmless.
    expect((await owner.api.post(`/api/v1/lists/${l.id}/accounts`, { account_ids: [x.id] })).status).toBe(200);

    const members = await owner.api.get(`/api/v1/lists/${l.id}/accounts`);
    expect(members.body.map((a: any) => a.id).sort()).toEqual([x.id, y.id].sort());
    expect(members.body[0]).toHaveProperty("acct");

    expect((await owner.api.delete(`/api/v1/lists/${l.id}/accounts`, { account_ids: [x.id] })).status).toBe(200);
    expect((await owner.api.get(`/api/v1/lists/${l.id}/accounts`)).body.map((a: any) => a.id)).toEqual([y.id]);
  });

  it("adding an account fills the list's timeline with its recent statuses, by the list's rules", async () => {
    const { eventually } = await import("./helpers");
    const [owner, member, other] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    expect((await owner.api.post(`/api/v1/accounts/${member.id}/follow`)).status).toBe(200);
    const pub = await member.api.post("/api/v1/statuses", { status: "public" });
    const priv = await member.api.post("/api/v1/statuses", { status: "followers only", visibility: "private" });
    const otherPost = await other.api.post("/api/v1/statuses", { status: "someone else" });
    const replyToOther = await member.api.post("/api/v1/statuses", { status: `@${other.username} hi`, in_reply_to_id: otherPost.body.id });
    const list = await owner.api.post("/api/v1/lists", { title: "members", replies_policy: "list" });
    expect((await owner.api.get(`/api/v1/timelines/list/${list.body.id}`)).body).toEqual([]);
    expect((await owner.api.post(`/api/v1/lists/${list.body.id}/accounts`, { account_ids: [member.id] })).status).toBe(200);
    await eventually(async () => {
      const tl = await owner.api.get(`/api/v1/timelines/list/${list.body.id}`);
      expect(tl.body.map((s: { id: string }) => s.id)).toEqual([priv.body.id, pub.body.id]);
    });
    expect(replyToOther.status).toBe(200); // a reply to a non-member stays out under replies_policy=list
  });

  it("paginates members with Link headers of membership ids, and limit=0 returns all", async () => {
    const owner = await makeUser();
    const l = (await owner.api.post("/api/v1/lists", { title: "Big" })).body;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const m = await makeUser();
      await follow(owner.id, m.id);
      ids.push(m.id);
    }
    await owner.api.post(`/api/v1/lists/${l.id}/accounts`, { account_ids: ids });

    const p1 = await owner.api.get(`/api/v1/lists/${l.id}/accounts?limit=2`);
    expect(p1.body).toHaveLength(2);
    const next = links(p1.headers).next!;
    expect(next).toContain("max_id=");
    const p2 = await owner.api.get(next);
    expect(p2.body).toHaveLength(2);
    const p3 = await owner.api.get(links(p2.headers).next!);
    expect(p3.body).toHaveLength(1);
    const seen = [...p1.body, ...p2.body, ...p3.body].map((a: any) => a.id);
    expect(new Set(seen).size).toBe(5);
    expect(links(p3.headers).next).toBeUndefined();

    const all = await owner.api.get(`/api/v1/lists/${l.id}/accounts?limit=0`);
    expect(all.body).toHaveLength(5);
    expect(all.headers.get("link")).toBeNull();
  });
});
