// /api/v1/admin/tags (Mastodon's admin hashtag API): every tag by id, one tag, and PUT /:id (display name, trendable,
// usable), audit-logged; manage_taxonomies only (an admin has it, a moderator does not).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, links, makeUser } from "./helpers";
import { ADMIN, MOD } from "./admin-fixtures";

describe("/api/v1/admin/tags", () => {
  it("lists, shows and updates hashtags; a display name must name the same tag", async () => {
    const admin = await makeUser(undefined, ADMIN);
    const u = await makeUser();
    await u.api.post("/api/v1/statuses", { status: "#Birds and #cats and #dogs" });
    const list = await admin.api.get("/api/v1/admin/tags?limit=2");
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    expect(list.body[0]).toMatchObject({ trendable: true, usable: true, requires_review: true });
    expect(list.body[0].history).toHaveLength(7);
    const rest = await admin.api.get(links(list.headers).next!);
    const all = [...list.body, ...rest.body];
    // Tags are named as first written (Tag#display_name).
    expect(all.map((t: any) => t.name)).toContain("Birds");
    const birds = all.find((t: any) => t.name === "Birds");
    expect((await admin.api.get(`/api/v1/admin/tags/${birds.id}`)).body).toMatchObject({ id: birds.id, name: "Birds" });

    const updated = await admin.api.put(`/api/v1/admin/tags/${birds.id}`, { display_name: "BIRDS", trendable: false, listable: false });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: birds.id, name: "BIRDS", trendable: false, usable: true, requires_review: false });
    const row = await env.DB.prepare("SELECT display_name FROM tags WHERE id = ?").bind(birds.id.padStart(20, "0")).first<{ display_name: string }>();
    expect(row?.display_name).toBe("BIRDS");
    const log = await env.DB.prepare("SELECT action, target_type FROM admin_action_logs WHERE target_id = ?").bind(birds.id.padStart(20, "0")).all();
    expect(log.results).toContainEqual({ action: "update", target_type: "Tag" });
    expect((await admin.api.put(`/api/v1/admin/tags/${birds.id}`, { display_name: "cats" })).status).toBe(422);
    expect((await admin.api.get("/api/v1/admin/tags/123")).status).toBe(404);
  });

  it("needs manage_taxonomies and the admin scopes", async () => {
    const mod = await makeUser(undefined, MOD);
    expect((await mod.api.get("/api/v1/admin/tags")).status).toBe(403);
    const plain = await makeUser();
    expect((await plain.api.get("/api/v1/admin/tags")).status).toBe(403);
    expect((await anon.get("/api/v1/admin/tags")).status).toBe(401);
  });
});
