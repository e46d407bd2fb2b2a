// DELETE /api/v1/admin/accounts/:id: a suspended account's data goes in bounded chunks through the queue, and a
// Delete of the actor reaches the servers of its followers and of the accounts it follows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { snowflake } from "../../src/lib/text/ids";
import { DELETE_CHUNK } from "../../src/services/accounts/delete-account";
import { ORIGIN, anon, eventually, makeUser } from "./helpers";
import { take } from "./federation-outbound-fixtures";
import { count, knownAround, pad } from "./delete-account-fixtures";
import { ADMIN, MOD } from "./admin-fixtures";

/** Statuses written straight into storage (more than one chunk's worth). */
async function bulkStatuses(accountId: string, username: string, n: number) {
  const base = Date.now() - 60_000;
  for (let i = 0; i < n; i += 50) {
    const stmts = [];
    for (let j = i; j < Math.min(n, i + 50); j++) {
      const id = snowflake(base + j);
      stmts.push(
        env.DB.prepare(
          "INSERT INTO statuses (id, uri, url, account_id, local, visibility, content, text, created_at, updated_at) VALUES (?1, ?2, ?2, ?3, 1, 'public', '<p>bulk</p>', 'bulk', ?4, ?4)",
        ).bind(pad(id), `${ORIGIN}/users/${username}/statuses/${id}`, pad(accountId), base + j),
      );
    }
    await env.DB.batch(stmts);
  }
}

describe("DELETE /api/v1/admin/accounts/:id", () => {
  it("refuses without delete_user_data, an unsuspended account, and signed-out callers", async () => {
    const admin = await makeUser("deladmin", ADMIN);
    const mod = await makeUser("delmod", MOD);
    const victim = await makeUser("delvictim");
    expect((await anon.delete(`/api/v1/admin/accounts/${victim.id}`)).status).toBe(401);
    expect((await admin.api.delete(`/api/v1/admin/accounts/${victim.id}`)).status).toBe(403);
    await admin.api.post(`/api/v1/admin/accounts/${victim.id}/action`, { type: "suspend" });
    const refused = await mod.api.delete(`/api/v1/admin/accounts/${victim.id}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: "This action is not allowed" });
    expect((await admin.api.delete("/api/v1/admin/accounts/999999")).status).toBe(404);
    expect(await count("SELECT count(*) AS n FROM admin_action_logs WHERE action = 'destroy'")).toBe(0);
  });

  it("removes statuses, relations and tokens in chunks and federates Delete{Actor} to followers' and followed servers", async () => {
    const admin = await makeUser("deladmin2", ADMIN);
    const victim = await makeUser("goner");
    const friend = await makeUser("friend");
    const { idol: followed, post } = await knownAround(victim, friend, "hello");
    await friend.api.post(`/api/v1/statuses/${post.body.id}/reblog`);
    await victim.api.post(`/api/v1/accounts/${friend.id}/follow`);
    await bulkStatuses(victim.id, victim.username, DELETE_CHUNK + 20);
    await admin.api.post(`/api/v1/admin/accounts/${victim.id}/action`, { type: "suspend" });
    await take();

    const res = await admin.api.delete(`/api/v1/admin/accounts/${victim.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: victim.id, username: "goner", suspended: true });
    // The login goes at once.
    expect((await victim.api.get("/api/v1/accounts/verify_credentials")).status).toBe(401);

    await eventually(async () => {
      expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(victim.id))).toBe(0);
      expect(await count("SELECT count(*) AS n FROM follows WHERE account_id = ?1 OR target_account_id = ?1", pad(victim.id))).toBe(0);
    });
    const a = pad(victim.id);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ?", pad(post.body.id))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM favourites WHERE status_id = ?", pad(post.body.id))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE account_id = ?1 OR from_account_id = ?1", a)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM oauth_access_tokens WHERE user_id = ?", pad(victim.userId))).toBe(0);
    expect(await count("SELECT count(*) AS n FROM tombstones WHERE account_id = ?", a)).toBe(DELETE_CHUNK + 21);
    const row = await env.DB.prepare("SELECT statuses_count, followers_count, following_count, display_name FROM accounts WHERE id = ?").bind(a).first<any>();
    expect(row).toEqual({ statuses_count: 0, followers_count: 0, following_count: 0, display_name: "" });
    const friendRow = await env.DB.prepare("SELECT following_count, statuses_count FROM accounts WHERE id = ?").bind(pad(friend.id)).first<any>();
    expect(friendRow).toEqual({ following_count: 0, statuses_count: 0 });
    expect((await anon.get(`/api/v1/statuses/${post.body.id}`)).status).toBe(404);
    expect(await count("SELECT count(*) AS n FROM admin_action_logs WHERE action = 'destroy' AND target_type = 'Account' AND target_id = ?", a)).toBe(1);

    const deletes = await take("Delete");
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.activity).toMatchObject({ type: "Delete", actor: `${ORIGIN}/users/goner`, object: `${ORIGIN}/users/goner` });
    expect(deletes[0]!.inboxes).toEqual([followed.inbox, "https://fans.example/inbox"].sort());
  });
});
