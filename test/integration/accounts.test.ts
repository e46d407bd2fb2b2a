import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { padId, snowflake } from "../../src/lib/text/ids";
import { anon, api, links, makeUser } from "./helpers";

const BAD_IDS = ["abc", "1e3", "0x10", "99999999999999999999999"];

async function insertStatus(
  accountId: string,
  opts: { visibility?: string; inReplyToId?: string; inReplyToAccountId?: string; reblogOfId?: string; text?: string } = {},
) {
  const id = snowflake();
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO statuses (id, uri, account_id, local, in_reply_to_id, in_reply_to_account_id, reblog_of_id, text, content, visibility, created_at, updated_at)
     VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      padId(id),
      `http://tern.test/s/${id}`,
      padId(accountId),
      opts.inReplyToId ? padId(opts.inReplyToId) : null,
      opts.inReplyToAccountId ? padId(opts.inReplyToAccountId) : null,
      opts.reblogOfId ? padId(opts.reblogOfId) : null,
      opts.text ?? "hi",
      `<p>${opts.text ?? "hi"}</p>`,
      opts.visibility ?? "public",
      now,
      now,
    )
    .run();
  return id;
}

async function suspend(accountId: string) {
  await env.DB.prepare("UPDATE accounts SET suspended_at = ? WHERE id = ?").bind(Date.now(), padId(accountId)).run();
}

describe("verify_credentials", () => {
  it("returns the credential account in one D1 round trip", async () => {
    const u = await makeUser();
    const res = await u.api.get("/api/v1/accounts/verify_credentials");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: u.id, username: u.username, acct: u.username, locked: false, bot: false });
    expect(res.body.source).toMatchObject({ privacy: "public", sensitive: false, note: "", fields: [], follow_requests_count: 0 });
    expect(res.body.role).toBeDefined();
    expect(res.headers.get("server-timing")).toContain("dur=1");
  });

  it("accepts the profile scope and refuses others", async () => {
    const p = await makeUser(undefined, { scopes: "profile" });
    expect((await p.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
    const w = await makeUser(undefined, { scopes: "write" });
    const res = await w.api.get("/api/v1/accounts/verify_credentials");
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("This action is outside the authorized scopes");
  });

  it("is 401 without a token or with a bad one", async () => {
    expect((await anon.get("/api/v1/accounts/verify_credentials")).status).toBe(401);
    const res = await api("nonsense").get("/api/v1/accounts/verify_credentials");
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("The access token is invalid");
  });
});

describe("update_credentials", () => {
  it("updates profile text, flags, fields and posting defaults (JSON)", async () => {
    const u = await makeUser();
    const res = await u.api.patch("/api/v1/accounts/update_credentials", {
      display_name: "  Alice A.  ",
      note: "Hello <world>\n\nsecond https://example.com",
      bot: true,
      discoverable: true,
      indexable: true,
      hide_collections: true,
      fields_attributes: [
        { name: "site", value: "https://example.com" },
        { name: "", value: "" },
      ],
      source: { privacy: "private", sensitive: true, language: "de" },
    });
    expect(res.status).toBe(200);
    expect(res.body.display_name).toBe("Alice A.");
    expect(res.body.note).toContain("<p>Hello &lt;world&gt;</p>");
    expect(res.body.note).toContain('<a href="https://example.com"');
    expect(res.body.bot).toBe(true);
    expect(res.body.discoverable).toBe(true);
    expect(res.body.hide_collections).toBe(true);
    expect(res.body.fields).toHaveLength(1);
    expect(res.body.source).toMatchObject({ privacy: "private", sensitive: true, language: "de", note: "Hello <world>\n\nsecond https://example.com" });
    expect(res.body.source.fields).toEqual([{ name: "site", value: "https://example.com", verified_at: null }]);
    const again = await u.api.get("/api/v1/accounts/verify_credentials");
    expect(again.body.source.privacy).toBe("private");
    expect(again.body.display_name).toBe("Alice A.");
  });

  it("accepts PUT, multipart with hash-style fields, and an empty source", async () => {
    const u = await makeUser();
    const form = new FormData();
    form.append("display_name", "Multi");
    form.append("fields_attributes[0][name]", "a");
    form.append("fields_attributes[0][value]", "1");
    form.append("fields_attributes[1][name]", "b");
    form.append("fields_attributes[1][value]", "2");
    form.append("source", "");
    form.append("locked", "true");
    const res = await u.api.put("/api/v1/accounts/update_credentials", form, "multipart");
    expect(res.status).toBe(200);
    expect(res.body.display_name).toBe("Multi");
    expect(res.body.locked).toBe(true);
    expect(res.body.fields.map((f: any) => f.name)).toEqual(["a", "b"]);
    const form2 = new URLSearchParams({ source: "" });
    expect((await u.api.patch("/api/v1/accounts/update_credentials", form2, "form")).status).toBe(200);
  });

  it("stores an uploaded avatar", async () => {
    const u = await makeUser();
    // 1×1 transparent PNG
    const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), (ch) =>
      ch.charCodeAt(0),
    );
    const form = new FormData();
    form.append("avatar", new File([png], "me.png", { type: "image/png" }));
    const res = await u.api.patch("/api/v1/accounts/update_credentials", form, "multipart");
    expect(res.status).toBe(200);
    expect(res.body.avatar).toMatch(/^http:\/\/tern\.test\/media\//);
    expect(res.body.avatar).not.toContain("missing.png");
  });

  it("refuses over-long profile data with 422 (A22)", async () => {
    const u = await makeUser();
    const cases: Record<string, unknown>[] = [
      { display_name: "x".repeat(31) },
      { note: "y".repeat(501) },
      { fields_attributes: [1, 2, 3, 4, 5].map((i) => ({ name: `n${i}`, value: `v${i}` })) },
      { fields_attributes: [{ name: "n", value: "v".repeat(256) }] },
      { fields_attributes: [{ name: "n".repeat(256), value: "v" }] },
      { display_name: "z".repeat(100_001) },
    ];
    for (const body of cases) {
      const res = await u.api.patch("/api/v1/accounts/update_credentials", body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(res.body.error).toMatch(/^Validation failed/);
    }
    // exactly at the limits is fine
    const ok = await u.api.patch("/api/v1/accounts/update_credentials", { display_name: "é".repeat(30), note: "n".repeat(500) });
    expect(ok.status).toBe(200);
  });

  it("needs write:accounts", async () => {
    const u = await makeUser(undefined, { scopes: "read" });
    expect((await u.api.patch("/api/v1/accounts/update_credentials", { display_name: "x" })).status).toBe(403);
    expect((await anon.patch("/api/v1/accounts/update_credentials", { display_name: "x" })).status).toBe(401);
  });
});

describe("GET /api/v1/accounts/:id, lookup, and id[]", () => {
  it("renders an account publicly, 404 for unknown and malformed ids (A8), 410 when suspended", async () => {
    const u = await makeUser();
    const res = await anon.get(`/api/v1/accounts/${u.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: u.id, username: u.username, followers_count: 0 });
    expect((await anon.get("/api/v1/accounts/123456")).status).toBe(404);
    for (const bad of BAD_IDS) {
      const r = await anon.get(`/api/v1/accounts/${bad}`);
      expect(r.status, bad).toBe(404);
      expect(r.body).toEqual({ error: "Record not found" });
    }
    const s = await makeUser();
    await suspend(s.id);
    expect((await anon.get(`/api/v1/accounts/${s.id}`)).status).toBe(410);
  });

  it("refuses a token without read:accounts and an invalid token", async () => {
    const u = await makeUser(undefined, { scopes: "write" });
    expect((await u.api.get(`/api/v1/accounts/${u.id}`)).status).toBe(403);
    expect((await api("bogus").get(`/api/v1/accounts/${u.id}`)).status).toBe(401);
  });

  it("looks up local accounts by acct", async () => {
    const u = await makeUser();
    expect((await anon.get(`/api/v1/accounts/lookup?acct=${u.username}`)).body.id).toBe(u.id);
    expect((await anon.get(`/api/v1/accounts/lookup?acct=@${u.username.toUpperCase()}@tern.test`)).body.id).toBe(u.id);
    expect((await anon.get(`/api/v1/accounts/lookup?acct=${u.username}@elsewhere.example`)).status).toBe(404);
    expect((await anon.get(`/api/v1/accounts/lookup?acct=nobody_here`)).status).toBe(404);
    expect((await anon.get(`/api/v1/accounts/lookup`)).status).toBe(422);
  });

  it("returns several accounts by id[], skipping unknown ones", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const res = await anon.get(`/api/v1/accounts?id[]=${a.id}&id[]=999&id[]=abc&id[]=${b.id}`);
    expect(res.status).toBe(200);
    expect(res.body.map((x: any) => x.id)).toEqual([a.id, b.id]);
  });
});

describe("GET /api/v1/accounts/:id/statuses", () => {
  it("lists pinned statuses most recently pinned first, as Mastodon orders them", async () => {
    const author = await makeUser();
    const [first, second, third] = [await insertStatus(author.id), await insertStatus(author.id), await insertStatus(author.id)];
    for (const id of [second, third, first]) expect((await author.api.post(`/api/v1/statuses/${id}/pin`)).status).toBe(200);
    const pinned = await anon.get(`/api/v1/accounts/${author.id}/statuses?pinned=true`);
    expect(pinned.body.map((s: any) => s.id)).toEqual([first, third, second]);
  });

  it("filters by visibility, replies, reblogs, pinned, and paginates", async () => {
    const author = await makeUser();
    const other = await makeUser();
    const follower = await makeUser();
    await follower.api.post(`/api/v1/accounts/${author.id}/follow`);
    const pub = await insertStatus(author.id, { text: "public one" });
    const priv = await insertStatus(author.id, { visibility: "private", text: "private one" });
    const otherPost = await insertStatus(other.id);
    const replyOther = await insertStatus(author.id, { inReplyToId: otherPost, inReplyToAccountId: other.id });
    const selfReply = await insertStatus(author.id, { inReplyToId: pub, inReplyToAccountId: author.id });
    const reblog = await insertStatus(author.id, { reblogOfId: otherPost });

    const all = await anon.get(`/api/v1/accounts/${author.id}/statuses`);
    expect(all.status).toBe(200);
    expect(all.body.map((s: any) => s.id)).toEqual([reblog, selfReply, replyOther, pub]);

    const asFollower = await follower.api.get(`/api/v1/accounts/${author.id}/statuses`);
    expect(asFollower.body.map((s: any) => s.id)).toContain(priv);

    const noReplies = await anon.get(`/api/v1/accounts/${author.id}/statuses?exclude_replies=true`);
    expect(noReplies.body.map((s: any) => s.id)).toEqual([reblog, selfReply, pub]);

    const noReblogs = await anon.get(`/api/v1/accounts/${author.id}/statuses?exclude_reblogs=1`);
    expect(noReblogs.body.map((s: any) => s.id)).not.toContain(reblog);

    await env.DB.prepare("INSERT INTO status_pins (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(padId(snowflake()), padId(author.id), padId(pub), Date.now())
      .run();
    const pinned = await anon.get(`/api/v1/accounts/${author.id}/statuses?pinned=true`);
    expect(pinned.body.map((s: any) => s.id)).toEqual([pub]);
    expect(pinned.body[0].pinned).toBeUndefined();

    const p1 = await anon.get(`/api/v1/accounts/${author.id}/statuses?limit=2`);
    expect(p1.body.map((s: any) => s.id)).toEqual([reblog, selfReply]);
    const next = links(p1.headers).next!;
    expect(next).toContain(`max_id=${selfReply}`);
    const p2 = await anon.get(next);
    expect(p2.body.map((s: any) => s.id)).toEqual([replyOther, pub]);
    const prev = await anon.get(links(p2.headers).prev!);
    expect(prev.body.map((s: any) => s.id)).toEqual([reblog, selfReply]);
  });

  it("filters by tag and by media", async () => {
    const author = await makeUser();
    const tagged = await insertStatus(author.id, { text: "#Cats" });
    const withMedia = await insertStatus(author.id);
    await insertStatus(author.id);
    const tagId = snowflake();
    await env.DB.prepare("INSERT INTO tags (id, name, display_name, created_at) VALUES (?, 'cats', 'Cats', ?)").bind(padId(tagId), Date.now()).run();
    await env.DB.prepare("INSERT INTO status_tags (status_id, tag_id) VALUES (?, ?)").bind(padId(tagged), padId(tagId)).run();
    await env.DB.prepare("INSERT INTO media_attachments (id, account_id, status_id, type, created_at) VALUES (?, ?, ?, 'image', ?)")
      .bind(padId(snowflake()), padId(author.id), padId(withMedia), Date.now())
      .run();
    expect((await anon.get(`/api/v1/accounts/${author.id}/statuses?tagged=CATS`)).body.map((s: any) => s.id)).toEqual([tagged]);
    expect((await anon.get(`/api/v1/accounts/${author.id}/statuses?tagged=dogs`)).body).toEqual([]);
    expect((await anon.get(`/api/v1/accounts/${author.id}/statuses?only_media=true`)).body.map((s: any) => s.id)).toEqual([withMedia]);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get(`/api/v1/accounts/${author.id}/statuses`)).status).toBe(403);
  });

  it("is empty for someone the author blocks, 404 for bad ids", async () => {
    const author = await makeUser();
    const blocked = await makeUser();
    await insertStatus(author.id);
    await author.api.post(`/api/v1/accounts/${blocked.id}/block`);
    expect((await blocked.api.get(`/api/v1/accounts/${author.id}/statuses`)).body).toEqual([]);
    for (const bad of BAD_IDS) expect((await anon.get(`/api/v1/accounts/${bad}/statuses`)).status).toBe(404);
    expect((await anon.get(`/api/v1/accounts/424242/statuses`)).status).toBe(404);
  });
});

describe("GET /api/v1/accounts/search", () => {
  it("matches username prefixes and display names", async () => {
    const u = await makeUser("searcher1");
    const t = await makeUser("zebrafinch");
    await t.api.patch("/api/v1/accounts/update_credentials", { display_name: "Stripy Bird" });
    const res = await u.api.get("/api/v1/accounts/search?q=zebra");
    expect(res.status).toBe(200);
    expect(res.body.map((a: any) => a.id)).toContain(t.id);
    expect((await u.api.get("/api/v1/accounts/search?q=stripy")).body.map((a: any) => a.id)).toContain(t.id);
    expect((await u.api.get("/api/v1/accounts/search?q=@zebrafinch@tern.test")).body.map((a: any) => a.id)).toEqual([t.id]);
    // following=true limits to followed accounts
    expect((await u.api.get("/api/v1/accounts/search?q=zebra&following=true")).body).toEqual([]);
    await u.api.post(`/api/v1/accounts/${t.id}/follow`);
    expect((await u.api.get("/api/v1/accounts/search?q=zebra&following=true")).body.map((a: any) => a.id)).toEqual([t.id]);
  });

  it("escapes LIKE wildcards and survives hostile text (A16, A17)", async () => {
    const u = await makeUser("wild_card");
    await makeUser("wildXcard");
    const res = await u.api.get(`/api/v1/accounts/search?q=${encodeURIComponent("wild_")}`);
    expect(res.status).toBe(200);
    expect(res.body.map((a: any) => a.username)).toEqual(["wild_card"]);
    for (const q of [
      "%",
      "%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_",
      "\\",
      "'); DROP TABLE accounts;--",
      "ü".repeat(200),
      "a".repeat(5000),
    ]) {
      const r = await u.api.get(`/api/v1/accounts/search?q=${encodeURIComponent(q)}`);
      expect(r.status, q.slice(0, 20)).toBe(200);
      expect(Array.isArray(r.body)).toBe(true);
    }
    expect((await u.api.get("/api/v1/accounts/search?q=%25")).body).toEqual([]);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).status).toBe(200);
  });

  it("needs a user token with read:accounts", async () => {
    expect((await anon.get("/api/v1/accounts/search?q=a")).status).toBe(401);
    const w = await makeUser(undefined, { scopes: "write" });
    expect((await w.api.get("/api/v1/accounts/search?q=a")).status).toBe(403);
  });

  it("leaves out suspended accounts", async () => {
    const u = await makeUser();
    const s = await makeUser("suspendedsearch");
    await suspend(s.id);
    expect((await u.api.get("/api/v1/accounts/search?q=suspendedsearch")).body).toEqual([]);
  });
});

describe("notes, featured tags, lists, endorsements", () => {
  it("stores a private note (max 2000) shown in the relationship", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const res = await a.api.post(`/api/v1/accounts/${b.id}/note`, { comment: "met at a conference" });
    expect(res.status).toBe(200);
    expect(res.body.note).toBe("met at a conference");
    expect((await a.api.post(`/api/v1/accounts/${b.id}/note`, { comment: "x".repeat(2001) })).status).toBe(422);
    expect((await a.api.post(`/api/v1/accounts/${b.id}/note`, { comment: "" })).body.note).toBe("");
    expect((await a.api.post(`/api/v1/accounts/abc/note`, { comment: "x" })).status).toBe(404);
    const r = await makeUser(undefined, { scopes: "read" });
    expect((await r.api.post(`/api/v1/accounts/${b.id}/note`, { comment: "x" })).status).toBe(403);
  });

  it("lists featured tags", async () => {
    const a = await makeUser();
    const tagId = snowflake();
    await env.DB.prepare("INSERT INTO tags (id, name, display_name, created_at) VALUES (?, 'cats', 'Cats', ?)").bind(padId(tagId), Date.now()).run();
    await env.DB.prepare("INSERT INTO featured_tags (id, account_id, tag_id, created_at) VALUES (?, ?, ?, ?)")
      .bind(padId(snowflake()), padId(a.id), padId(tagId), Date.now())
      .run();
    const res = await anon.get(`/api/v1/accounts/${a.id}/featured_tags`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: expect.any(String), name: "Cats", url: `http://tern.test/@${a.username}/tagged/cats`, statuses_count: 0, last_status_at: null },
    ]);
    expect((await anon.get(`/api/v1/accounts/1e3/featured_tags`)).status).toBe(404);
  });

  it("lists the viewer's lists containing an account", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const listId = snowflake();
    await env.DB.prepare("INSERT INTO lists (id, account_id, title, created_at) VALUES (?, ?, 'friends', ?)")
      .bind(padId(listId), padId(a.id), Date.now())
      .run();
    await env.DB.prepare("INSERT INTO list_accounts (id, list_id, account_id) VALUES (?, ?, ?)").bind(padId(snowflake()), padId(listId), padId(b.id)).run();
    const res = await a.api.get(`/api/v1/accounts/${b.id}/lists`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ id: listId, title: "friends", replies_policy: "list", exclusive: false }]);
    expect((await b.api.get(`/api/v1/accounts/${b.id}/lists`)).body).toEqual([]);
    expect((await anon.get(`/api/v1/accounts/${b.id}/lists`)).status).toBe(401);
    expect((await a.api.get(`/api/v1/accounts/abc/lists`)).status).toBe(404);
  });

  it("endorses followed accounts only, and lists endorsements", async () => {
    const a = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    expect((await a.api.post(`/api/v1/accounts/${b.id}/pin`)).status).toBe(422);
    await a.api.post(`/api/v1/accounts/${b.id}/follow`);
    await a.api.post(`/api/v1/accounts/${c.id}/follow`);
    const res = await a.api.post(`/api/v1/accounts/${b.id}/pin`);
    expect(res.status).toBe(200);
    expect(res.body.endorsed).toBe(true);
    expect((await a.api.post(`/api/v1/accounts/${c.id}/endorse`)).body.endorsed).toBe(true);
    const mine = await a.api.get("/api/v1/endorsements?limit=1");
    expect(mine.body.map((x: any) => x.id)).toEqual([c.id]);
    const more = await a.api.get(links(mine.headers).next!);
    expect(more.body.map((x: any) => x.id)).toEqual([b.id]);
    expect((await anon.get(`/api/v1/accounts/${a.id}/endorsements`)).body.map((x: any) => x.id)).toEqual([c.id, b.id]);
    expect((await a.api.post(`/api/v1/accounts/${b.id}/unpin`)).body.endorsed).toBe(false);
    expect((await a.api.post(`/api/v1/accounts/999999/unendorse`)).status).toBe(404);
    expect((await anon.get("/api/v1/endorsements")).status).toBe(401);
  });
});

describe("familiar_followers", () => {
  it("lists accounts the viewer follows who follow the target", async () => {
    const me = await makeUser();
    const friend = await makeUser();
    const stranger = await makeUser();
    const target = await makeUser();
    await me.api.post(`/api/v1/accounts/${friend.id}/follow`);
    await friend.api.post(`/api/v1/accounts/${target.id}/follow`);
    await stranger.api.post(`/api/v1/accounts/${target.id}/follow`);
    const res = await me.api.get(`/api/v1/accounts/familiar_followers?id[]=${target.id}&id[]=${stranger.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: target.id, accounts: [expect.objectContaining({ id: friend.id })] },
      { id: stranger.id, accounts: [] },
    ]);
    expect((await anon.get(`/api/v1/accounts/familiar_followers?id[]=${target.id}`)).status).toBe(401);
  });
});
