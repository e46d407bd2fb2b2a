// Security (issue, class 3): a suspended local account is not readable over ActivityPub. Mastodon's rule
// (AccountOwnedConcern, a reversible staff suspension): the actor stays served, marked `suspended: true` with nothing
// personal; everything it owns (statuses, their activities, outbox, followers, following, featured collections)
// answers 403. A deleted status answers 410 with a Tombstone, never its old content, and leaves every collection.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";

const ADMIN = { roleId: "2", scopes: "read write admin:read admin:write" };
const AP = { accept: "application/activity+json" };

async function apGet(path: string): Promise<{ status: number; text: string }> {
  const res = await SELF.fetch(`${ORIGIN}${path}`, { headers: AP, redirect: "manual" });
  return { status: res.status, text: await res.text() };
}

describe("a suspended local account over ActivityPub", () => {
  it("answers 403 for its statuses, activities and collections, serves a blank suspended actor, and comes back when unsuspended", async () => {
    const admin = await makeUser("apboss", ADMIN);
    const u = await makeUser("apsuzy");
    const secret = "my whereabouts are SECRET-CONTENT";
    const post = await u.api.post("/api/v1/statuses", { status: secret });
    expect(post.status).toBe(200);
    expect((await u.api.post(`/api/v1/statuses/${post.body.id}/pin`)).status).toBe(200);
    await u.api.patch("/api/v1/accounts/update_credentials", { note: "bio SECRET-BIO", display_name: "Suzy SECRET-NAME" });
    const id = post.body.id as string;

    const owned = [
      `/users/apsuzy/statuses/${id}`,
      `/users/apsuzy/statuses/${id}/activity`,
      `/@apsuzy/${id}`,
      "/users/apsuzy/outbox",
      "/users/apsuzy/outbox?page=true",
      "/users/apsuzy/followers",
      "/users/apsuzy/followers?page=1",
      "/users/apsuzy/following",
      "/users/apsuzy/collections/featured",
      "/users/apsuzy/collections/tags",
    ];
    for (const p of owned) expect((await apGet(p)).status, p).toBe(200);
    expect((await apGet(`/users/apsuzy/statuses/${id}`)).text).toContain("SECRET-CONTENT");
    expect((await apGet("/users/apsuzy/outbox?page=true")).text).toContain("SECRET-CONTENT");
    expect((await apGet("/users/apsuzy/collections/featured")).text).toContain("SECRET-CONTENT");

    expect((await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "suspend" })).status).toBe(200);

    for (const p of owned) {
      const r = await apGet(p);
      expect(r.status, p).toBe(403);
      expect(r.text, p).not.toContain("SECRET");
    }
    for (const p of ["/users/apsuzy", "/@apsuzy"]) {
      const actor = await apGet(p);
      expect(actor.status, p).toBe(200);
      expect(actor.text).not.toContain("SECRET");
      const doc = JSON.parse(actor.text);
      expect(doc).toMatchObject({ id: `${ORIGIN}/users/apsuzy`, suspended: true, summary: "", attachment: [], tag: [], discoverable: false, indexable: false });
      expect(doc.icon).toBeUndefined();
      expect(doc.publicKey.publicKeyPem).toContain("PUBLIC KEY");
    }
    // The inbox still takes deliveries (Mastodon skips the suspension check there): not a 403.
    const inbox = await SELF.fetch(`${ORIGIN}/users/apsuzy/inbox`, { method: "POST", body: "{}" });
    expect(inbox.status).not.toBe(403);
    await inbox.arrayBuffer();

    expect((await admin.api.post(`/api/v1/admin/accounts/${u.id}/unsuspend`)).status).toBe(200);
    for (const p of owned) expect((await apGet(p)).status, p).toBe(200);
  });

  it("an unknown account is 404 everywhere", async () => {
    for (const p of ["/users/nobodyhere/statuses/1", "/users/nobodyhere/outbox", "/users/nobodyhere/collections/featured", "/users/nobodyhere/followers"]) {
      expect((await apGet(p)).status, p).toBe(404);
    }
  });
});

describe("a deleted status over ActivityPub", () => {
  it("is a 410 Tombstone at its URI and its activity, and is gone from the outbox and featured", async () => {
    const u = await makeUser("apdel");
    const post = await u.api.post("/api/v1/statuses", { status: "soon gone SECRET-DELETED" });
    const id = post.body.id as string;
    await u.api.post(`/api/v1/statuses/${id}/pin`);
    expect((await u.api.delete(`/api/v1/statuses/${id}`)).status).toBe(200);

    for (const p of [`/users/apdel/statuses/${id}`, `/users/apdel/statuses/${id}/activity`, `/@apdel/${id}`]) {
      const r = await apGet(p);
      expect(r.status, p).toBe(410);
      expect(JSON.parse(r.text), p).toMatchObject({ id: `${ORIGIN}/users/apdel/statuses/${id}`, type: "Tombstone" });
      expect(r.text).not.toContain("SECRET");
    }
    for (const p of ["/users/apdel/outbox?page=true", "/users/apdel/collections/featured"]) {
      const r = await apGet(p);
      expect(r.status, p).toBe(200);
      expect(r.text, p).not.toContain("SECRET");
    }
  });
});
