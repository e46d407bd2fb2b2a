// GET and PATCH /api/v1/profile (Mastodon 4.6): the user's own Profile with the raw bio and fields and null pictures
// when unset, changed by the same rules as update_credentials.
import { describe, expect, it } from "vitest";
import { anon, makeUser } from "./helpers";

describe("/api/v1/profile", () => {
  it("shows and changes the signed-in user's profile, as its editor needs it", async () => {
    const u = await makeUser();
    const first = await u.api.get("/api/v1/profile");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: u.id, avatar: null, header: null, avatar_description: "", locked: false, bot: false, featured_tags: [] });

    const changed = await u.api.patch("/api/v1/profile", {
      display_name: "Ada",
      note: "I like #birds & <b>code</b>",
      locked: true,
      fields_attributes: [{ name: "site", value: "https://example.com" }],
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      display_name: "Ada",
      note: "I like #birds & <b>code</b>",
      locked: true,
      fields: [{ name: "site", value: "https://example.com", verified_at: null }],
    });
    expect((await u.api.get("/api/v1/profile")).body.note).toBe("I like #birds & <b>code</b>");
    // The Account shows the bio as HTML, the Profile as written.
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).body.note).not.toBe("I like #birds & <b>code</b>");
    expect((await u.api.put("/api/v1/profile", { display_name: "Ada L." })).body.display_name).toBe("Ada L.");
  });

  it("refuses what update_credentials refuses and changes nothing; needs a user token with the right scope", async () => {
    const u = await makeUser();
    expect((await u.api.patch("/api/v1/profile", { display_name: "x".repeat(31) })).status).toBe(422);
    expect((await u.api.patch("/api/v1/profile", { note: "n".repeat(501) })).status).toBe(422);
    expect((await u.api.get("/api/v1/profile")).body.display_name).toBe("");
    expect((await anon.get("/api/v1/profile")).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read" });
    expect((await readOnly.api.patch("/api/v1/profile", { display_name: "y" })).status).toBe(403);
    expect((await readOnly.api.get("/api/v1/profile")).status).toBe(200);
  });
});
