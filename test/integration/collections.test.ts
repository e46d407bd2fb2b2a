// Collections (Mastodon 4.6): create, show, list, update, delete; items added, removed and revoked by the featured
// account; the collections an account is in; the rules of Mastodon's model and policies; /api/v1_alpha aliases; a D1
// that refuses the write leaves nothing behind.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, makeUser, type TestUser } from "./helpers";

async function discoverable(...users: TestUser[]) {
  for (const u of users) expect((await u.api.patch("/api/v1/accounts/update_credentials", { discoverable: true })).status).toBe(200);
}

const count = async (table: string) => (await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;

describe("collections", () => {
  it("are created with their accounts and hashtag, shown to anyone, listed, updated and deleted by their owner", async () => {
    const owner = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    await discoverable(b, c);
    const created = await owner.api.post("/api/v1/collections", {
      name: "Birders",
      description: "people who watch birds",
      language: "en",
      tag_name: "#Birds",
      account_ids: [b.id, c.id],
    });
    expect(created.status).toBe(200);
    const col = created.body.collection;
    expect(col).toMatchObject({
      account_id: owner.id,
      name: "Birders",
      description: "people who watch birds",
      language: "en",
      local: true,
      sensitive: false,
      discoverable: true,
      tag: { name: "Birds", url: "http://tern.test/tags/birds" },
      item_count: 2,
    });
    expect(col.uri).toBe(`http://tern.test/collections/${col.id}`);
    expect(col.url).toBe(col.uri);
    expect(col.items.map((i: any) => [i.account_id, i.state])).toEqual([
      [b.id, "accepted"],
      [c.id, "accepted"],
    ]);

    // Shown to anyone, with the owner's and the items' accounts.
    const shown = await anon.get(`/api/v1/collections/${col.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.collection.id).toBe(col.id);
    expect(shown.body.accounts.map((a: any) => a.id)).toEqual([owner.id, b.id, c.id]);
    expect((await anon.get(`/api/v1_alpha/collections/${col.id}`)).body.collection.name).toBe("Birders");

    // Listed on the owner's profile; one that is not discoverable only to its owner.
    const hidden = await owner.api.post("/api/v1/collections", { name: "Secret", discoverable: false });
    expect(hidden.status).toBe(200);
    expect((await anon.get(`/api/v1/accounts/${owner.id}/collections`)).body.collections.map((x: any) => x.name)).toEqual(["Birders"]);
    expect((await owner.api.get(`/api/v1/accounts/${owner.id}/collections`)).body.collections.map((x: any) => x.name)).toEqual(["Secret", "Birders"]);
    const paged = await owner.api.get(`/api/v1/accounts/${owner.id}/collections?limit=1`);
    expect(paged.body.collections).toHaveLength(1);
    expect(paged.headers.get("link")).toContain("offset=1");
    expect((await b.api.get(`/api/v1_alpha/accounts/${owner.id}/collections`)).body.collections).toHaveLength(1);

    // The collections an account is featured in: its own question only.
    expect((await b.api.get(`/api/v1/accounts/${b.id}/in_collections`)).body.collections.map((x: any) => x.id)).toEqual([col.id]);
    expect((await c.api.get(`/api/v1/accounts/${b.id}/in_collections`)).status).toBe(403);

    // Updated by the owner only; an empty tag_name removes the hashtag.
    expect((await b.api.patch(`/api/v1/collections/${col.id}`, { name: "Mine now" })).status).toBe(403);
    const updated = await owner.api.patch(`/api/v1/collections/${col.id}`, { name: "Bird people", tag_name: "", sensitive: true });
    expect(updated.status).toBe(200);
    expect(updated.body.collection).toMatchObject({ name: "Bird people", tag: null, sensitive: true, description: "people who watch birds" });

    // Deleted by the owner only.
    expect((await b.api.delete(`/api/v1/collections/${col.id}`)).status).toBe(403);
    expect((await owner.api.delete(`/api/v1/collections/${col.id}`)).body).toEqual({});
    expect((await anon.get(`/api/v1/collections/${col.id}`)).status).toBe(404);
    expect((await b.api.get(`/api/v1/accounts/${b.id}/in_collections`)).body.collections).toEqual([]);
  });

  it("items: added and removed by the owner, revoked by the featured account, capped at 25", async () => {
    const owner = await makeUser();
    const b = await makeUser();
    const c = await makeUser();
    await discoverable(b, c);
    const col = (await owner.api.post("/api/v1/collections", { name: "Friends" })).body.collection;
    const added = await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: b.id });
    expect(added.status).toBe(200);
    expect(added.body.collection_item).toMatchObject({ account_id: b.id, state: "accepted" });
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: b.id })).status).toBe(422);
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, {})).status).toBe(422);
    expect((await c.api.post(`/api/v1/collections/${col.id}/items`, { account_id: c.id })).status).toBe(403);
    const cItem = (await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: c.id })).body.collection_item;
    expect((await anon.get(`/api/v1/collections/${col.id}`)).body.collection.item_count).toBe(2);

    // Revoked by the featured account alone; it cannot be added again.
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items/${cItem.id}/revoke`)).status).toBe(403);
    expect((await c.api.post(`/api/v1/collections/${col.id}/items/${cItem.id}/revoke`)).body).toEqual({});
    const after = (await anon.get(`/api/v1/collections/${col.id}`)).body;
    expect(after.collection.item_count).toBe(1);
    expect(after.collection.items.map((i: any) => i.account_id)).toEqual([b.id]);
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: c.id })).status).toBe(422);

    // Removed by the owner.
    expect((await owner.api.delete(`/api/v1/collections/${col.id}/items/${added.body.collection_item.id}`)).body).toEqual({});
    expect((await anon.get(`/api/v1/collections/${col.id}`)).body.collection.item_count).toBe(0);
    expect((await owner.api.delete(`/api/v1/collections/${col.id}/items/${added.body.collection_item.id}`)).status).toBe(404);

    // 25 at most.
    const many: TestUser[] = [];
    for (let i = 0; i < 26; i++) many.push(await makeUser());
    await env.DB.prepare("UPDATE accounts SET discoverable = 1").run();
    const full = await owner.api.post("/api/v1/collections", { name: "Many", account_ids: many.slice(0, 25).map((u) => u.id) });
    expect(full.status).toBe(200);
    expect(full.body.collection.item_count).toBe(25);
    expect((await owner.api.post(`/api/v1/collections/${full.body.collection.id}/items`, { account_id: many[25]!.id })).status).toBe(422);
    expect((await owner.api.post("/api/v1/collections", { name: "Too many", account_ids: many.map((u) => u.id) })).status).toBe(422);
  });

  it("feature_approval.current_user answers for the viewer who asks: a locked account lets its followers in, nobody signed out, never oneself", async () => {
    const owner = await makeUser();
    const locked = await makeUser();
    const open = await makeUser();
    await discoverable(owner, locked, open);
    expect((await locked.api.patch("/api/v1/accounts/update_credentials", { locked: true })).status).toBe(200);
    const approval = async (id: string) => (await owner.api.get(`/api/v1/accounts/${id}`)).body.feature_approval;
    const searched = async (q: string) => {
      const v1 = (await owner.api.get(`/api/v1/accounts/search?q=${q}`)).body.find((a: any) => a.username === q);
      const v2 = (await owner.api.get(`/api/v2/search?type=accounts&q=${q}`)).body.accounts.find((a: any) => a.username === q);
      const byId = (await owner.api.get(`/api/v1/accounts?id[]=${locked.id}`)).body[0];
      const looked = (await owner.api.get(`/api/v1/accounts/lookup?acct=${q}`)).body;
      return [v1, v2, byId, looked].map((a: any) => a.feature_approval.current_user);
    };
    const col = (await owner.api.post("/api/v1/collections", { name: "Quiet ones" })).body.collection;

    // Not a follower: the followers' policy leaves the owner out, everywhere an account is looked up, and adding fails.
    expect(await approval(locked.id)).toEqual({ automatic: ["followers"], manual: [], current_user: "denied" });
    expect(await searched(locked.username)).toEqual(["denied", "denied", "denied", "denied"]);
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: locked.id })).status).toBe(403);

    // Followed (the request authorized): the same answers say automatic, and adding succeeds.
    expect((await owner.api.post(`/api/v1/accounts/${locked.id}/follow`)).body.requested).toBe(true);
    expect((await locked.api.post(`/api/v1/follow_requests/${owner.id}/authorize`)).status).toBe(200);
    expect((await approval(locked.id)).current_user).toBe("automatic");
    expect(await searched(locked.username)).toEqual(["automatic", "automatic", "automatic", "automatic"]);
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: locked.id })).status).toBe(200);

    // An open account lets anybody signed in add it; nobody signed out; the viewer's own account never.
    expect((await approval(open.id)).current_user).toBe("automatic");
    expect((await anon.get(`/api/v1/accounts/${open.id}`)).body.feature_approval.current_user).toBe("denied");
    expect((await approval(owner.id)).current_user).toBe("denied");
    expect((await owner.api.post(`/api/v1/collections/${col.id}/items`, { account_id: owner.id })).status).toBe(403);
  });

  it("refuses what Mastodon refuses, and stores nothing then", async () => {
    const owner = await makeUser();
    const shy = await makeUser();
    const blocker = await makeUser();
    await discoverable(blocker);
    expect((await blocker.api.post(`/api/v1/accounts/${owner.id}/block`)).status).toBe(200);
    const before = await count("collections");
    const bad: [Record<string, unknown>, number][] = [
      [{}, 422],
      [{ name: "   " }, 422],
      [{ name: "x".repeat(41) }, 422],
      [{ name: "ok", description: "d".repeat(101) }, 422],
      [{ name: "ok", language: "not a language" }, 422],
      [{ name: "ok", tag_name: "###" }, 422],
      [{ name: "ok", account_ids: [shy.id] }, 403],
      [{ name: "ok", account_ids: [blocker.id] }, 403],
      [{ name: "ok", account_ids: [owner.id] }, 403],
      [{ name: "ok", account_ids: ["999999999999"] }, 404],
      [{ name: "ok", account_ids: ["abc"] }, 404],
      [{ name: ["a", "b"] }, 422],
    ];
    for (const [body, status] of bad)
      expect([JSON.stringify(body), (await owner.api.post("/api/v1/collections", body)).status]).toEqual([JSON.stringify(body), status]);
    expect(await count("collections")).toBe(before);
    expect((await anon.post("/api/v1/collections", { name: "x" })).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.post("/api/v1/collections", { name: "x" })).status).toBe(403);
    const writeOnly = await makeUser(undefined, { scopes: "write" });
    expect((await writeOnly.api.get(`/api/v1/accounts/${owner.id}/collections`)).status).toBe(403);
    for (const path of ["/api/v1/collections/abc", "/api/v1/collections/123", "/api/v1/accounts/123/collections"])
      expect((await anon.get(path)).status).toBe(404);
    // A collection whose owner blocks the viewer is not shown to them.
    const mine = (await blocker.api.post("/api/v1/collections", { name: "Not for you" })).body.collection;
    expect((await owner.api.get(`/api/v1/collections/${mine.id}`)).status).toBe(404);
    expect((await owner.api.get(`/api/v1/accounts/${blocker.id}/collections`)).body).toEqual({ collections: [] });
    // Ten at most per account.
    for (let i = 0; i < 10; i++) expect((await owner.api.post("/api/v1/collections", { name: `c${i}` })).status).toBe(200);
    expect((await owner.api.post("/api/v1/collections", { name: "eleventh" })).status).toBe(422);
  });

  it("a D1 that refuses the write: a 5xx, and no collection without its items", async () => {
    const owner = await makeUser();
    const b = await makeUser();
    await discoverable(b);
    const before = await count("collections");
    await env.DB.prepare("ALTER TABLE collection_items RENAME TO collection_items_away").run();
    try {
      const r = await owner.api.post("/api/v1/collections", { name: "Half", account_ids: [b.id] });
      expect(r.status).toBe(500);
      expect(r.body).toHaveProperty("error");
    } finally {
      await env.DB.prepare("ALTER TABLE collection_items_away RENAME TO collection_items").run();
    }
    expect(await count("collections")).toBe(before);
    expect((await owner.api.post("/api/v1/collections", { name: "Whole", account_ids: [b.id] })).body.collection.item_count).toBe(1);
  });

  it("a report may name the reported account's collections (Mastodon 4.6's collection_ids); others' or unknown ones are refused", async () => {
    const [owner, reporter, other] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const col = (await owner.api.post("/api/v1/collections", { name: "Spam list" })).body.collection;
    const foreign = (await other.api.post("/api/v1/collections", { name: "Fine" })).body.collection;
    const before = await count("reports");
    expect((await reporter.api.post("/api/v1/reports", { account_id: owner.id, collection_ids: [foreign.id] })).status).toBe(422);
    expect((await reporter.api.post("/api/v1/reports", { account_id: owner.id, collection_ids: ["999999999999"] })).status).toBe(404);
    expect((await reporter.api.post("/api/v1/reports", { account_id: owner.id, collection_ids: ["x"] })).status).toBe(404);
    expect(await count("reports")).toBe(before);
    const filed = await reporter.api.post("/api/v1/reports", { account_id: owner.id, collection_ids: [col.id], comment: "a list of spammers" });
    expect(filed.status).toBe(200);
    expect(filed.body).toMatchObject({ collection_ids: [col.id], status_ids: [], category: "other" });
    const plain = await reporter.api.post("/api/v1/reports", { account_id: owner.id });
    expect(plain.body.collection_ids).toEqual([]);
  });

  it("a local collection's url is its page: the curator, the description (escaped) and the accounts; ActivityPub gets JSON there", async () => {
    const owner = await makeUser();
    const b = await makeUser();
    await discoverable(b);
    const col = (await owner.api.post("/api/v1/collections", { name: "Friends <3", description: "<script>alert(1)</script> nice", account_ids: [b.id] })).body
      .collection;
    const page = await SELF.fetch(col.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("Friends &lt;3");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; nice");
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain(`@${b.username}@tern.test`);
    expect(html).toContain(`<link rel="alternate" type="application/activity+json" href="${col.uri}"`);
    const doc = await SELF.fetch(col.uri, { headers: { accept: "application/activity+json" } });
    expect(doc.headers.get("content-type")).toContain("application/activity+json");
    expect((await doc.json<any>()).type).toBe("FeaturedCollection");
    expect((await SELF.fetch("http://tern.test/collections/999999999")).status).toBe(404);
  });
});
