// Follow suggestions: friends of friends first, then the most followed local accounts; only discoverable accounts
// the viewer does not already follow, block, mute or dismissed.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { follow } from "./feeds-fixtures";
import { makeUser, type TestUser } from "./helpers";

const discoverable = (...users: TestUser[]) =>
  Promise.all(users.map((u) => env.DB.prepare("UPDATE accounts SET discoverable = 1 WHERE id = ?").bind(u.id.padStart(20, "0")).run()));

describe("/api/v2/suggestions and /api/v1/suggestions", () => {
  it("suggests whom the viewer's follows follow, then popular accounts, never what is excluded", async () => {
    const [me, friend, fof, popular, hidden, blocked, muted, dismissed, followed] = await Promise.all(Array.from({ length: 9 }, () => makeUser()));
    await discoverable(friend, fof, popular, blocked, muted, dismissed, followed);
    await follow(me, friend);
    await follow(me, followed);
    for (const t of [fof, hidden, blocked, muted, dismissed, followed]) await follow(friend, t);
    // `popular` has followers, but none the viewer follows.
    for (const f of [fof, blocked, muted]) await follow(f, popular);
    expect((await me.api.post(`/api/v1/accounts/${blocked.id}/block`)).status).toBe(200);
    expect((await me.api.post(`/api/v1/accounts/${muted.id}/mute`)).status).toBe(200);
    expect((await me.api.delete(`/api/v1/suggestions/${dismissed.id}`)).status).toBe(200);

    const v2 = await me.api.get("/api/v2/suggestions");
    expect(v2.status).toBe(200);
    const ids = v2.body.map((s: { account: { id: string } }) => s.account.id);
    expect(ids[0]).toBe(fof.id);
    expect(ids).toContain(popular.id);
    for (const gone of [me, hidden, blocked, muted, dismissed, followed, friend]) expect(ids).not.toContain(gone.id);
    expect(v2.body[0]).toMatchObject({ source: "past_interactions", sources: expect.arrayContaining(["friends_of_friends"]) });
    expect(v2.body.find((s: { account: { id: string } }) => s.account.id === popular.id)).toMatchObject({ source: "global", sources: ["most_followed"] });

    const v1 = await me.api.get("/api/v1/suggestions?limit=1");
    expect(v1.body.map((a: { id: string }) => a.id)).toEqual([fof.id]);

    // Following a suggestion takes it off the list.
    await follow(me, fof);
    expect((await me.api.get("/api/v2/suggestions")).body.map((s: { account: { id: string } }) => s.account.id)).not.toContain(fof.id);
  });

  it("needs a user token with read:accounts", async () => {
    const u = await makeUser(undefined, { scopes: "write" });
    expect((await u.api.get("/api/v2/suggestions")).status).toBe(403);
  });
});
