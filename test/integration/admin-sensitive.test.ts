// The admin action `sensitive` marks every status of the account with media sensitive (REST and ActivityPub) until
// `unsensitive`; the admin API reports and filters it. Plus two small account endpoints' Mastodon answers.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, ORIGIN } from "./helpers";
import { png } from "./media-fixtures";

const ADMIN = { roleId: "2", scopes: "read write admin:read admin:write" };

describe("admin: mark media as sensitive", () => {
  it("shows the account's media statuses sensitive until lifted; text-only statuses stay as they are", async () => {
    const [admin, u] = await Promise.all([makeUser(undefined, ADMIN), makeUser()]);
    const form = new FormData();
    form.append("file", new File([await png(4, 4)], "p.png", { type: "image/png" }));
    const media = await u.api.post("/api/v2/media", form, "multipart");
    expect(media.status).toBe(200);
    const withMedia = await u.api.post("/api/v1/statuses", { status: "look", media_ids: [media.body.id] });
    const text = await u.api.post("/api/v1/statuses", { status: "words" });
    expect(withMedia.body.sensitive).toBe(false);

    expect((await admin.api.post(`/api/v1/admin/accounts/${u.id}/action`, { type: "sensitive" })).status).toBe(200);
    expect((await u.api.get(`/api/v1/statuses/${withMedia.body.id}`)).body.sensitive).toBe(true);
    expect((await u.api.get(`/api/v1/statuses/${text.body.id}`)).body.sensitive).toBe(false);
    const note = await SELF.fetch(`${ORIGIN}/users/${u.username}/statuses/${withMedia.body.id}`, { headers: { accept: "application/activity+json" } });
    expect(((await note.json()) as { sensitive: boolean }).sensitive).toBe(true);
    expect((await admin.api.get(`/api/v1/admin/accounts/${u.id}`)).body.sensitized).toBe(true);
    const listed = await admin.api.get("/api/v2/admin/accounts?status=sensitized");
    expect(listed.body.map((a: { id: string }) => a.id)).toEqual([u.id]);

    const lifted = await admin.api.post(`/api/v1/admin/accounts/${u.id}/unsensitive`);
    expect(lifted.body.sensitized).toBe(false);
    expect((await u.api.get(`/api/v1/statuses/${withMedia.body.id}`)).body.sensitive).toBe(false);
  });
});

describe("account endpoints kept for old clients", () => {
  it("GET /api/v1/accounts/:id/identity_proofs is [] (404 for an unknown account)", async () => {
    const u = await makeUser();
    expect((await u.api.get(`/api/v1/accounts/${u.id}/identity_proofs`)).body).toEqual([]);
    expect((await u.api.get("/api/v1/accounts/123456/identity_proofs")).status).toBe(404);
  });

  it("a fields_attributes that is neither a list nor a map is ignored", async () => {
    const u = await makeUser();
    await u.api.patch("/api/v1/accounts/update_credentials", { fields_attributes: [{ name: "kept", value: "yes" }] });
    for (const junk of ["text", 5, true]) {
      const r = await u.api.patch("/api/v1/accounts/update_credentials", { display_name: `n${String(junk)}`, fields_attributes: junk });
      expect(r.status).toBe(200);
      expect(r.body.display_name).toBe(`n${String(junk)}`);
      expect(r.body.fields.map((f: { name: string }) => f.name)).toEqual(["kept"]);
    }
  });
});
