// Announcements: staff write them through /api/v1/admin/announcements, users read, dismiss and react through
// /api/v1/announcements, and open user streams hear each change.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { makeUser, type TestUser } from "./helpers";
import { runQueuedJobs } from "./queues";
import { itStreams, payloadOf, ws } from "./streaming-fixtures";

const STAFF = { roleId: "2", scopes: "read write admin:read admin:write" };

async function announce(staff: TestUser, body: Record<string, unknown>) {
  const r = await staff.api.post("/api/v1/admin/announcements", { published: true, ...body });
  expect(r.status).toBe(200);
  return r.body as { id: string; content: string; published: boolean };
}

const list = async (u: TestUser, query = "") => {
  const r = await u.api.get(`/api/v1/announcements${query}`);
  expect(r.status).toBe(200);
  return r.body as Record<string, any>[];
};

describe("announcements", () => {
  it("published ones reach every user with content, mentions, tags and read state; drafts stay with staff", async () => {
    const [staff, user] = await Promise.all([makeUser(undefined, STAFF), makeUser()]);
    const a = await announce(staff, { text: `Maintenance tonight, ask @${staff.username} #ops\n\nhttps://status.example/` });
    const draft = await announce(staff, { text: "not yet", published: false });
    const [got, ...rest] = await list(user);
    expect(rest.map((x) => x.id)).not.toContain(draft.id);
    expect(got).toMatchObject({
      id: a.id,
      read: false,
      all_day: false,
      starts_at: null,
      ends_at: null,
      reactions: [],
      statuses: [],
      emojis: [],
      tags: [{ name: "ops" }],
      mentions: [{ id: staff.id, username: staff.username, acct: staff.username }],
    });
    expect(got?.content).toContain('class="u-url mention"');
    expect(got?.content).toContain('href="https://status.example/"');
    expect(typeof got?.published_at).toBe("string");

    // Publishing the draft brings it to users; unpublishing takes it away.
    expect((await staff.api.post(`/api/v1/admin/announcements/${draft.id}/publish`)).body.published).toBe(true);
    expect((await list(user)).map((x) => x.id)).toEqual([a.id, draft.id]);
    expect((await staff.api.post(`/api/v1/admin/announcements/${draft.id}/unpublish`)).body.published).toBe(false);
    expect((await list(user)).map((x) => x.id)).toEqual([a.id]);
  });

  it("dismiss is idempotent, hides it unless with_dismissed, and 404 for unknown or unpublished ones", async () => {
    const [staff, user] = await Promise.all([makeUser(undefined, STAFF), makeUser()]);
    const a = await announce(staff, { text: "hello" });
    const draft = await announce(staff, { text: "draft", published: false });
    for (let i = 0; i < 2; i++) expect((await user.api.post(`/api/v1/announcements/${a.id}/dismiss`)).status).toBe(200);
    expect((await list(user)).map((x) => x.id)).not.toContain(a.id);
    const all = await list(user, "?with_dismissed=true");
    expect(all.find((x) => x.id === a.id)?.read).toBe(true);
    expect((await user.api.post(`/api/v1/announcements/${draft.id}/dismiss`)).status).toBe(404);
    expect((await user.api.post("/api/v1/announcements/999999/dismiss")).status).toBe(404);
    // Another user still sees it unread.
    const other = await makeUser();
    expect((await list(other)).find((x) => x.id === a.id)?.read).toBe(false);
  });

  it("reactions: Unicode and custom emoji with counts and me, at most 8 names, unknown names refused", async () => {
    const [staff, u1, u2] = await Promise.all([makeUser(undefined, STAFF), makeUser(), makeUser()]);
    await env.DB.prepare(
      "INSERT OR IGNORE INTO custom_emojis (id, shortcode, domain, image_key, visible_in_picker, disabled, created_at) VALUES ('00000000000000000042', 'tern', NULL, 'emoji/tern.png', 1, 0, 0)",
    ).run();
    const a = await announce(staff, { text: "react!" });
    const react = (u: TestUser, name: string) => u.api.put(`/api/v1/announcements/${a.id}/reactions/${encodeURIComponent(name)}`);
    expect((await react(u1, "👍")).status).toBe(200);
    expect((await react(u1, "👍")).status).toBe(200); // again: no second count
    expect((await react(u2, "👍")).status).toBe(200);
    expect((await react(u2, "tern")).status).toBe(200);
    const seen = (await list(u1)).find((x) => x.id === a.id)!;
    expect(seen.reactions).toEqual([
      { name: "👍", count: 2, me: true },
      expect.objectContaining({ name: "tern", count: 1, me: false, url: expect.stringContaining("emoji/tern.png") }),
    ]);

    for (const bad of ["nope", "<script>", "a", "👍👍x"]) expect((await react(u1, bad)).status).toBe(422);
    for (const e of ["😀", "🎉", "❤️", "🇫🇷", "👍🏽", "1️⃣"]) expect((await react(u1, e)).status).toBe(200);
    // Eight names now: a ninth is refused, an existing one is still fine.
    expect((await react(u2, "🚀")).status).toBe(422);
    expect((await react(u2, "🎉")).status).toBe(200);

    expect((await u1.api.delete(`/api/v1/announcements/${a.id}/reactions/${encodeURIComponent("👍")}`)).status).toBe(200);
    const after = (await list(u2)).find((x) => x.id === a.id)!;
    expect(after.reactions.find((r: { name: string }) => r.name === "👍")).toEqual({ name: "👍", count: 1, me: true });
  });

  it("only staff with manage_announcements write them; every change is in the audit log", async () => {
    const [staff, user] = await Promise.all([makeUser(undefined, STAFF), makeUser(undefined, { scopes: "read write admin:read admin:write" })]);
    expect((await user.api.post("/api/v1/admin/announcements", { text: "x" })).status).toBe(403);
    expect((await user.api.get("/api/v1/admin/announcements")).status).toBe(403);
    // A moderator (Mastodon's default Moderator role has no manage_announcements) is staff, but refused here too.
    const moderator = await makeUser(undefined, { roleId: "1", scopes: "read write admin:read admin:write" });
    expect((await moderator.api.post("/api/v1/admin/announcements", { text: "x" })).status).toBe(403);
    expect((await moderator.api.get("/api/v1/admin/announcements")).status).toBe(403);
    expect((await staff.api.post("/api/v1/admin/announcements", { text: "  " })).status).toBe(422);
    expect((await staff.api.post("/api/v1/admin/announcements", { text: "x", starts_at: "2026-12-01T00:00:00Z" })).status).toBe(422);
    expect(
      (await staff.api.post("/api/v1/admin/announcements", { text: "x", starts_at: "2026-12-02T00:00:00Z", ends_at: "2026-12-01T00:00:00Z" })).status,
    ).toBe(422);
    const a = await announce(staff, { text: "window", starts_at: "2026-12-01T00:00:00Z", ends_at: "2026-12-02T00:00:00Z", all_day: true });
    const edited = await staff.api.put(`/api/v1/admin/announcements/${a.id}`, { text: "window (edited)" });
    expect(edited.body).toMatchObject({ text: "window (edited)", starts_at: "2026-12-01T00:00:00.000Z", all_day: true });
    expect((await staff.api.delete(`/api/v1/admin/announcements/${a.id}`)).status).toBe(200);
    expect((await staff.api.get(`/api/v1/admin/announcements/${a.id}`)).status).toBe(404);
    const logs = await env.DB.prepare("SELECT action FROM admin_action_logs WHERE target_type = 'Announcement' AND target_id = ? ORDER BY id")
      .bind(a.id.padStart(20, "0"))
      .all<{ action: string }>();
    expect(logs.results.map((l) => l.action)).toEqual(["create", "update", "destroy"]);
  });
});

describe("announcement streaming events", () => {
  itStreams("publish, reaction and delete reach every open user stream", async () => {
    const [staff, user] = await Promise.all([makeUser(undefined, STAFF), makeUser()]);
    const c = await ws({ token: user.token }, { stream: "user" });
    const a = await announce(staff, { text: "live" });
    await runQueuedJobs();
    const published = await c.next();
    expect(published.event).toBe("announcement");
    expect(payloadOf(published)).toMatchObject({ id: a.id, content: "<p>live</p>" });

    expect((await staff.api.put(`/api/v1/announcements/${a.id}/reactions/${encodeURIComponent("🎉")}`)).status).toBe(200);
    await runQueuedJobs();
    const reaction = await c.next();
    expect(reaction.event).toBe("announcement.reaction");
    expect(payloadOf(reaction)).toEqual({ name: "🎉", count: 1, announcement_id: a.id });

    expect((await staff.api.delete(`/api/v1/admin/announcements/${a.id}`)).status).toBe(200);
    await runQueuedJobs();
    expect(await c.next()).toEqual({ stream: ["user"], event: "announcement.delete", payload: a.id });
  });
});
