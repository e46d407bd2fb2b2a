import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { ORIGIN, anon, cfg, makeUser } from "./helpers";

const pad = (id: string) => id.padStart(20, "0");

async function post(accountId: string, text: string, visibility = "public") {
  const now = Date.now();
  const id = snowflake(now);
  await env.DB.prepare(
    "INSERT INTO statuses (id, uri, account_id, local, visibility, text, content, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
  )
    .bind(pad(id), `${ORIGIN}/users/x/statuses/${id}`, pad(accountId), visibility, text, `<p>${text}</p>`, now, now)
    .run();
  await env.DB.prepare("INSERT INTO status_search (id, text) VALUES (CAST(? AS INTEGER), ?)").bind(pad(id), text).run();
  return id;
}

async function relate(table: "blocks" | "mutes" | "favourites" | "bookmarks", a: string, b: string) {
  const col = table === "favourites" || table === "bookmarks" ? "status_id" : "target_account_id";
  await env.DB.prepare(`INSERT INTO ${table} (id, account_id, ${col}, created_at) VALUES (?, ?, ?, ?)`)
    .bind(pad(snowflake()), pad(a), pad(b), Date.now())
    .run();
}

describe("GET /api/v2/search accounts", () => {
  it("finds accounts by username and display-name prefix, and by exact acct and URL", async () => {
    const me = await makeUser("searcher");
    const al = await makeUser("alfred");
    await makeUser("alfonso");
    await env.DB.prepare("UPDATE accounts SET display_name = 'Zed Hopper' WHERE id = ?").bind(pad(al.id)).run();

    const res = await me.api.get("/api/v2/search?q=alf&type=accounts");
    expect(res.status).toBe(200);
    expect(res.body.accounts.map((a: any) => a.username).sort()).toEqual(["alfonso", "alfred"]);
    expect(res.body.statuses).toEqual([]);
    expect(res.body.hashtags).toEqual([]);

    expect((await me.api.get("/api/v2/search?q=hopper&type=accounts")).body.accounts.map((a: any) => a.id)).toEqual([al.id]);
    expect((await me.api.get(`/api/v2/search?q=${encodeURIComponent(`@alfred@${cfg().domain}`)}`)).body.accounts.map((a: any) => a.id)).toEqual([al.id]);
    expect((await me.api.get(`/api/v2/search?q=${encodeURIComponent(`${ORIGIN}/@alfred`)}`)).body.accounts.map((a: any) => a.id)).toEqual([al.id]);
    expect((await anon.get("/api/v2/search?q=alfr")).body.accounts.map((a: any) => a.id)).toEqual([al.id]);
  });

  it("treats LIKE wildcards literally and survives SQL text and huge queries (A16, A17)", async () => {
    const me = await makeUser();
    await makeUser("under_score");
    await makeUser("underdog");
    expect((await me.api.get("/api/v2/search?q=%25")).body.accounts).toEqual([]);
    expect((await me.api.get("/api/v2/search?q=_")).status).toBe(200);
    expect((await me.api.get("/api/v2/search?q=_")).body.accounts.map((a: any) => a.username)).toEqual([]);
    expect((await me.api.get("/api/v2/search?q=under_&type=accounts")).body.accounts.map((a: any) => a.username)).toEqual(["under_score"]);
    const wild = await me.api.get(`/api/v2/search?q=${encodeURIComponent("%_%_%".repeat(40))}`);
    expect(wild.status).toBe(200);
    expect(wild.body.accounts).toEqual([]);
    const inj = await me.api.get(`/api/v2/search?q=${encodeURIComponent("'); DROP TABLE statuses;--")}`);
    expect(inj.status).toBe(200);
    const huge = await me.api.get(`/api/v2/search?q=${"ü".repeat(5000)}`);
    expect(huge.status).toBe(200);
    expect((await me.api.get("/api/v1/instance")).status).toBe(200);
  });

  it("leaves out accounts the viewer blocked, muted, or is blocked by", async () => {
    const me = await makeUser();
    const blocked = await makeUser("zeta_blocked");
    const muted = await makeUser("zeta_muted");
    const blocker = await makeUser("zeta_blocker");
    const fine = await makeUser("zeta_fine");
    await relate("blocks", me.id, blocked.id);
    await relate("mutes", me.id, muted.id);
    await relate("blocks", blocker.id, me.id);
    const res = await me.api.get("/api/v2/search?q=zeta&type=accounts");
    expect(res.body.accounts.map((a: any) => a.id)).toEqual([fine.id]);
  });

  it("supports following=true, limit and offset", async () => {
    const me = await makeUser();
    const f = await makeUser("omega_followed");
    await makeUser("omega_other");
    await env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(pad(snowflake()), pad(me.id), pad(f.id), 0)
      .run();
    expect((await me.api.get("/api/v2/search?q=omega&following=true")).body.accounts.map((a: any) => a.id)).toEqual([f.id]);
    const first = await me.api.get("/api/v2/search?q=omega&type=accounts&limit=1");
    expect(first.body.accounts.map((a: any) => a.id)).toEqual([f.id]); // followed ranks first
    const second = await me.api.get("/api/v2/search?q=omega&type=accounts&limit=1&offset=1");
    expect(second.body.accounts).toHaveLength(1);
    expect(second.body.accounts[0].id).not.toBe(f.id);
  });
});

describe("GET /api/v2/search statuses", () => {
  it("finds the viewer's own, favourited and bookmarked statuses, not strangers'", async () => {
    const me = await makeUser();
    const other = await makeUser();
    const own = await post(me.id, "searchable pelican words");
    const faved = await post(other.id, "another pelican here");
    const marked = await post(other.id, "bookmarked pelican");
    await post(other.id, "unrelated pelican"); // public but never interacted with
    await relate("favourites", me.id, faved);
    await relate("bookmarks", me.id, marked);
    const res = await me.api.get("/api/v2/search?q=pelican&type=statuses");
    expect(res.status).toBe(200);
    expect(res.body.statuses.map((s: any) => s.id)).toEqual([marked, faved, own]);
    expect(res.body.statuses[0]).toHaveProperty("account");
    const byAccount = await me.api.get(`/api/v2/search?q=pelican&type=statuses&account_id=${other.id}`);
    expect(byAccount.body.statuses.map((s: any) => s.id)).toEqual([marked, faved]);
  });

  it("finds a visible status by URL, and never a blocked author's or an invisible one", async () => {
    const me = await makeUser();
    const author = await makeUser("pubauthor");
    const blockedAuthor = await makeUser();
    const pub = await post(author.id, "hello");
    const priv = await post(author.id, "secret", "private");
    const fromBlocked = await post(blockedAuthor.id, "blocked pelican");
    await relate("favourites", me.id, fromBlocked);
    await relate("blocks", me.id, blockedAuthor.id);
    const byUrl = await me.api.get(`/api/v2/search?q=${encodeURIComponent(`${ORIGIN}/@pubauthor/${pub}`)}&type=statuses`);
    expect(byUrl.body.statuses.map((s: any) => s.id)).toEqual([pub]);
    const hidden = await me.api.get(`/api/v2/search?q=${encodeURIComponent(`${ORIGIN}/@pubauthor/${priv}`)}&type=statuses`);
    expect(hidden.body.statuses).toEqual([]);
    expect((await me.api.get("/api/v2/search?q=pelican&type=statuses")).body.statuses).toEqual([]);
  });

  it("finds nothing for signed-out visitors and never resolves remotely without a user (D9)", async () => {
    const u = await makeUser();
    await post(u.id, "anonymous pelican");
    expect((await anon.get("/api/v2/search?q=pelican&type=statuses")).body.statuses).toEqual([]);
    const res = await anon.get(`/api/v2/search?q=${encodeURIComponent("https://attacker.example/x")}&resolve=true`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accounts: [], statuses: [], hashtags: [] });
    expect((await anon.get("/api/v2/search?q=pelican&offset=5")).status).toBe(401);
  });
});

describe("GET /api/v2/search hashtags and auth", () => {
  it("finds hashtags by normalised prefix", async () => {
    await env.DB.prepare(
      "INSERT INTO tags (id, name, display_name, created_at) VALUES ('00000000000000000001', 'caturday', 'Caturday', 0), ('00000000000000000002', 'cats', 'Cats', 0), ('00000000000000000003', 'dogs', 'dogs', 0)",
    ).run();
    const res = await anon.get("/api/v2/search?q=%23CAT&type=hashtags");
    expect(res.body.hashtags.map((t: any) => t.name).sort()).toEqual(["Cats", "Caturday"]);
    expect(res.body.hashtags[0].history).toHaveLength(7);
    expect(res.body.hashtags[0].url).toMatch(/\/tags\/cat/);
    expect((await anon.get("/api/v2/search?q=dogs")).body.hashtags.map((t: any) => t.name)).toEqual(["dogs"]);
    expect((await anon.get("/api/v2/search?q=cats&type=nonsense")).body).toEqual({ accounts: [], statuses: [], hashtags: [] });
  });

  it("checks the token when one is given and requires q", async () => {
    expect((await anon.get("/api/v2/search")).status).toBe(400);
    const bad = await (await import("./helpers")).api("not-a-token").get("/api/v2/search?q=x");
    expect(bad.status).toBe(401);
    const noScope = await makeUser(undefined, { scopes: "write" });
    expect((await noScope.api.get("/api/v2/search?q=x")).status).toBe(403);
    const scoped = await makeUser(undefined, { scopes: "read:search" });
    expect((await scoped.api.get("/api/v2/search?q=x")).status).toBe(200);
  });
});
