// Grouped notifications (/api/v2/notifications): group keys made at insert by the real actions, paging over groups
// with Mastodon's page fields and Link headers, one group, its accounts, dismiss, unread_count, round trips.
import { describe, expect, it } from "vitest";
import { anon, links, makeUser, type Res, type TestUser } from "./helpers";
import { exec, insertStatus, nextId, pad } from "./feeds-fixtures";

const roundTrips = (r: Res) => Number(/dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? NaN);
const HOUR = 3_600_000;

/** A notification row written directly, newest so far (ids from nextId increase). */
async function notify(
  to: TestUser,
  from: { id: string },
  type: string,
  o: { status?: string | null; key?: string | null; createdAt?: number; filtered?: boolean } = {},
): Promise<string> {
  const id = nextId();
  await exec(
    "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, created_at, group_key, filtered) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    pad(id),
    pad(to.id),
    pad(from.id),
    type,
    o.status ? pad(o.status) : null,
    pad(nextId()),
    o.createdAt ?? Date.now(),
    o.key ?? null,
    o.filtered ? 1 : 0,
  );
  return id;
}

const groupsOf = (r: Res) => r.body.notification_groups as any[];
const keysOf = (r: Res) => groupsOf(r).map((g) => g.group_key);

describe("grouped notifications", { timeout: 60000 }, () => {
  it("groups favourites, reblogs and follows made by the real actions, with sample accounts", async () => {
    const [me, a, b, c] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    for (const u of [a, b, c]) expect((await u.api.post(`/api/v1/statuses/${s}/favourite`)).status).toBe(200);
    for (const u of [a, b]) expect((await u.api.post(`/api/v1/statuses/${s}/reblog`)).status).toBe(200);
    for (const u of [a, b]) expect((await u.api.post(`/api/v1/accounts/${me.id}/follow`)).status).toBe(200);
    const mention = await a.api.post("/api/v1/statuses", { status: `@${me.username} hello` });
    expect(mention.status).toBe(200);

    const res = await me.api.get("/api/v2/notifications");
    expect(res.status).toBe(200);
    const groups = groupsOf(res);
    expect(groups.map((g) => g.type)).toEqual(["mention", "follow", "reblog", "favourite"]);
    const [men, fol, reb, fav] = groups;
    expect(fav.group_key).toMatch(new RegExp(`^favourite-${s}-\\d{6}$`));
    expect(reb.group_key).toMatch(new RegExp(`^reblog-${s}-\\d{6}$`));
    expect(fol.group_key).toMatch(/^follow-\d{6}$/);
    expect(men.group_key).toBe(`ungrouped-${men.most_recent_notification_id}`);
    expect(fav).toMatchObject({ notifications_count: 3, sample_account_ids: [c.id, b.id, a.id], status_id: s });
    expect(reb).toMatchObject({ notifications_count: 2, sample_account_ids: [b.id, a.id], status_id: s });
    expect(fol).toMatchObject({ notifications_count: 2, sample_account_ids: [b.id, a.id] });
    expect(fol.status_id).toBeUndefined();
    expect(men).toMatchObject({ notifications_count: 1, sample_account_ids: [a.id], status_id: mention.body.id });
    for (const g of groups) {
      expect(g.page_max_id).toBe(g.most_recent_notification_id);
      expect(typeof g.page_min_id).toBe("string");
      expect(Number.isNaN(Date.parse(g.latest_page_notification_at))).toBe(false);
    }
    // Each account and status once, in full.
    expect(res.body.accounts.map((x: any) => x.id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect(res.body.accounts[0]).toHaveProperty("followers_count");
    expect(res.body.statuses.map((x: any) => x.id).sort()).toEqual([s, mention.body.id].sort());
    expect(res.body.partial_accounts).toBeUndefined();

    // v1 shows every notification, each with its group's key.
    const v1 = await me.api.get("/api/v1/notifications");
    expect(v1.body).toHaveLength(8);
    expect(v1.body.filter((n: any) => n.type === "favourite").map((n: any) => n.group_key)).toEqual([fav.group_key, fav.group_key, fav.group_key]);

    // grouped_types[]: only those types group; the others are one group per notification.
    const onlyFav = await me.api.get("/api/v2/notifications?grouped_types[]=favourite");
    expect(groupsOf(onlyFav).map((g) => g.type)).toEqual(["mention", "follow", "follow", "reblog", "reblog", "favourite"]);
    expect(keysOf(onlyFav).filter((k) => k.startsWith("ungrouped-"))).toHaveLength(5);
    expect(groupsOf(onlyFav).at(-1).notifications_count).toBe(3);

    // partial_avatars: only each group's newest account in full, the others stripped down.
    const partial = await me.api.get("/api/v2/notifications?expand_accounts=partial_avatars");
    expect(partial.body.accounts.map((x: any) => x.id).sort()).toEqual([a.id, b.id, c.id].sort());
    const onlyFavPartial = await me.api.get("/api/v2/notifications?types[]=favourite&expand_accounts=partial_avatars");
    expect(onlyFavPartial.body.accounts.map((x: any) => x.id)).toEqual([c.id]);
    expect(onlyFavPartial.body.partial_accounts.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expect(Object.keys(onlyFavPartial.body.partial_accounts[0]).sort()).toEqual(["acct", "avatar", "avatar_static", "bot", "id", "locked", "url"]);
    const bad = await me.api.get("/api/v2/notifications?expand_accounts=everything");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/expand_accounts/);

    // types[], exclude_types[], account_id
    expect(keysOf(await me.api.get("/api/v2/notifications?types[]=follow&types[]=mention"))).toEqual([men.group_key, fol.group_key]);
    expect(groupsOf(await me.api.get("/api/v2/notifications?exclude_types[]=follow&exclude_types[]=mention")).map((g) => g.type)).toEqual([
      "reblog",
      "favourite",
    ]);
    const fromC = await me.api.get(`/api/v2/notifications?account_id=${c.id}`);
    expect(groupsOf(fromC)).toHaveLength(1);
    expect(groupsOf(fromC)[0]).toMatchObject({ group_key: fav.group_key, type: "favourite" });
  });

  it("keeps a group's hour bucket while members come within 12 hours, and starts a new one after", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const s1 = await insertStatus(me);
    const s2 = await insertStatus(me);
    const bucket = Math.floor(Date.now() / HOUR);
    // An earlier favourite 5 hours ago opened a group 5 buckets back: the next one joins it.
    const old = `favourite-${s1}-${bucket - 5}`;
    await notify(me, b, "favourite", { status: s1, key: old, createdAt: Date.now() - 5 * HOUR });
    // On s2 the last one was 13 hours ago: a new group starts.
    await notify(me, b, "favourite", { status: s2, key: `favourite-${s2}-${bucket - 13}`, createdAt: Date.now() - 13 * HOUR });
    await a.api.post(`/api/v1/statuses/${s1}/favourite`);
    await a.api.post(`/api/v1/statuses/${s2}/favourite`);
    const after = Math.floor(Date.now() / HOUR);
    const groups = groupsOf(await me.api.get("/api/v2/notifications"));
    expect(groups.map((g) => g.group_key)).toHaveLength(3);
    expect(groups[0].group_key).toMatch(new RegExp(`^favourite-${s2}-(${bucket}|${after})$`));
    expect(groups[0].notifications_count).toBe(1);
    expect(groups[1]).toMatchObject({ group_key: old, notifications_count: 2, sample_account_ids: [a.id, b.id] });
    expect(groups[2]).toMatchObject({ group_key: `favourite-${s2}-${bucket - 13}`, notifications_count: 1 });
  });

  it("pages over groups as Mastodon does, with page fields and Link headers", async () => {
    const [me, u1, u2, u3, u4, u5] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const m = await insertStatus(u2, { mentions: [me.id] });
    const m2 = await insertStatus(u5, { mentions: [me.id] });
    const G1 = `favourite-${s}-400000`;
    const G2 = `reblog-${s}-400000`;
    const n1 = await notify(me, u1, "favourite", { status: s, key: G1 });
    const n2 = await notify(me, u2, "mention", { status: m });
    const n3 = await notify(me, u3, "favourite", { status: s, key: G1 });
    const n4 = await notify(me, u1, "reblog", { status: s, key: G2 });
    const n5 = await notify(me, u4, "favourite", { status: s, key: G1 });
    const n6 = await notify(me, u5, "mention", { status: m2 });
    const n7 = await notify(me, u2, "reblog", { status: s, key: G2 });
    const M2 = `ungrouped-${n2}`;
    const M6 = `ungrouped-${n6}`;

    const all = await me.api.get("/api/v2/notifications");
    expect(keysOf(all)).toEqual([G2, M6, G1, M2]);

    const p1 = await me.api.get("/api/v2/notifications?limit=2");
    expect(keysOf(p1)).toEqual([G2, M6]);
    expect(groupsOf(p1)[0]).toMatchObject({
      notifications_count: 2,
      most_recent_notification_id: n7,
      page_max_id: n7,
      page_min_id: n7,
      sample_account_ids: [u2.id, u1.id],
    });
    expect(groupsOf(p1)[1]).toMatchObject({ notifications_count: 1, most_recent_notification_id: n6, page_min_id: n6, page_max_id: n6 });
    const l1 = links(p1.headers);
    expect(l1.next).toContain(`max_id=${n6}`);
    expect(l1.next).toContain("limit=2");
    expect(l1.prev).toContain(`min_id=${n7}`);

    // A group goes on over the next pages; its data there counts up to the page's newest notification.
    const p2 = await me.api.get(l1.next!);
    expect(keysOf(p2)).toEqual([G1, G2]);
    expect(groupsOf(p2)[0]).toMatchObject({
      most_recent_notification_id: n5,
      notifications_count: 3,
      page_min_id: n5,
      sample_account_ids: [u4.id, u3.id, u1.id],
    });
    expect(groupsOf(p2)[1]).toMatchObject({ most_recent_notification_id: n4, notifications_count: 1, page_min_id: n4 });
    const p3 = await me.api.get(links(p2.headers).next!);
    expect(keysOf(p3)).toEqual([G1, M2]);
    expect(groupsOf(p3)[0]).toMatchObject({ most_recent_notification_id: n3, notifications_count: 2, page_min_id: n3 });
    const p4 = await me.api.get(links(p3.headers).next!);
    expect(keysOf(p4)).toEqual([G1]);
    expect(groupsOf(p4)[0]).toMatchObject({ most_recent_notification_id: n1, notifications_count: 1, page_min_id: n1 });
    expect(links(p4.headers).next).toBeUndefined();
    const p5 = await me.api.get(`/api/v2/notifications?limit=2&max_id=${n1}`);
    expect(p5.body).toEqual({ accounts: [], statuses: [], notification_groups: [] });
    expect(p5.headers.get("link")).toBeNull();

    // min_id: the groups immediately above, each at its oldest notification there.
    const up = await me.api.get(`/api/v2/notifications?limit=2&min_id=${n2}`);
    expect(keysOf(up)).toEqual([G2, G1]);
    expect(groupsOf(up)[0]).toMatchObject({ most_recent_notification_id: n4, notifications_count: 1, page_min_id: n4 });
    expect(groupsOf(up)[1]).toMatchObject({ most_recent_notification_id: n3, notifications_count: 2, page_min_id: n3 });
    // The last page upwards reaches to the top.
    const top = await me.api.get(`/api/v2/notifications?limit=5&min_id=${n5}`);
    expect(keysOf(top)).toEqual([G2, M6]);
    expect(groupsOf(top)[0]).toMatchObject({ most_recent_notification_id: n7, notifications_count: 2, page_min_id: n7 });
    // since_id: the newest groups above the cursor.
    const since = await me.api.get(`/api/v2/notifications?since_id=${n4}`);
    expect(keysOf(since)).toEqual([G2, M6, G1]);
    expect(groupsOf(since)[2]).toMatchObject({ most_recent_notification_id: n5, notifications_count: 3, page_min_id: n5 });
    // Limits clamp.
    expect((await me.api.get("/api/v2/notifications?limit=1000")).status).toBe(200);
    expect(keysOf(await me.api.get("/api/v2/notifications?limit=0"))).toHaveLength(4);
  });

  it("shows one group, lists its accounts and dismisses it", async () => {
    const [me, other, u1, u2, u3] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const G = `favourite-${s}-400000`;
    const ids = [];
    for (const u of [u1, u2, u3]) ids.push(await notify(me, u, "favourite", { status: s, key: G }));
    const f = await notify(me, u1, "follow");
    await notify(other, u1, "favourite", { status: s, key: G });

    const one = await me.api.get(`/api/v2/notifications/${G}`);
    expect(one.status).toBe(200);
    expect(one.body.notification_groups).toEqual([
      {
        group_key: G,
        notifications_count: 3,
        type: "favourite",
        most_recent_notification_id: ids[2],
        sample_account_ids: [u3.id, u2.id, u1.id],
        status_id: s,
      },
    ]);
    expect(one.body.statuses.map((x: any) => x.id)).toEqual([s]);
    expect(one.body.accounts.map((x: any) => x.id)).toEqual([u3.id, u2.id, u1.id]);
    const single = await me.api.get(`/api/v2/notifications/ungrouped-${f}`);
    expect(single.body.notification_groups[0]).toMatchObject({ group_key: `ungrouped-${f}`, type: "follow", notifications_count: 1 });
    expect((await me.api.get("/api/v2/notifications/favourite-1-1")).status).toBe(404);
    expect((await me.api.get("/api/v2/notifications/ungrouped-abc")).status).toBe(404);
    const theirs = await notify(other, u1, "follow");
    expect((await me.api.get(`/api/v2/notifications/ungrouped-${theirs}`)).status).toBe(404);

    const accts = await me.api.get(`/api/v2/notifications/${G}/accounts?limit=2`);
    expect(accts.status).toBe(200);
    expect(accts.body.map((x: any) => x.id)).toEqual([u3.id, u2.id]);
    const next = await me.api.get(links(accts.headers).next!);
    expect(next.body.map((x: any) => x.id)).toEqual([u1.id]);
    expect((await me.api.get(`/api/v2/notifications/ungrouped-${f}/accounts`)).body.map((x: any) => x.id)).toEqual([u1.id]);

    expect((await me.api.post(`/api/v2/notifications/${G}/dismiss`)).body).toEqual({});
    expect((await me.api.get(`/api/v2/notifications/${G}`)).status).toBe(404);
    expect(keysOf(await me.api.get("/api/v2/notifications"))).toEqual([`ungrouped-${f}`]);
    expect((await me.api.post(`/api/v2/notifications/ungrouped-${f}/dismiss`)).status).toBe(200);
    expect(keysOf(await me.api.get("/api/v2/notifications"))).toEqual([]);
    // Another user's group with the same key is theirs.
    expect(keysOf(await other.api.get("/api/v2/notifications"))).toEqual([`ungrouped-${theirs}`, G]);
    const readOnly = await makeUser(undefined, { scopes: "read:notifications" });
    expect((await readOnly.api.post(`/api/v2/notifications/${G}/dismiss`)).status).toBe(403);
  });

  it("counts unread groups after the notifications marker", async () => {
    const [me, u1, u2, u3, u4, u5] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const G1 = `favourite-${s}-400000`;
    const G2 = `reblog-${s}-400000`;
    await notify(me, u1, "favourite", { status: s, key: G1 });
    await notify(me, u2, "follow");
    const n3 = await notify(me, u3, "favourite", { status: s, key: G1 });
    await notify(me, u1, "reblog", { status: s, key: G2 });
    await notify(me, u4, "favourite", { status: s, key: G1 });
    await notify(me, u5, "follow");
    await notify(me, u2, "reblog", { status: s, key: G2 });
    await notify(me, u3, "favourite", { status: s, filtered: true });
    const count = async (q = "") => (await me.api.get(`/api/v2/notifications/unread_count${q}`)).body.count;
    expect(await count()).toBe(4);
    expect(await count("?limit=3")).toBe(3);
    await me.api.post("/api/v1/markers", { notifications: { last_read_id: n3 } });
    expect(await count()).toBe(3);
    expect(await count("?grouped_types[]=favourite")).toBe(4);
    expect(await count("?types[]=favourite")).toBe(1);
    expect(await count("?exclude_types[]=favourite")).toBe(2);
    expect((await me.api.get("/api/v1/notifications/unread_count")).body.count).toBe(4);
    expect((await anon.get("/api/v2/notifications/unread_count")).status).toBe(401);
  });

  it("leaves out filtered notifications unless asked, hidden senders, and statuses the viewer cannot see", async () => {
    const [me, a, b, c] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const priv = await insertStatus(c, { visibility: "private" });
    const G = `favourite-${s}-400000`;
    await notify(me, a, "favourite", { status: s, key: G });
    await notify(me, b, "favourite", { status: s, key: G });
    const filtered = await notify(me, c, "mention", { status: await insertStatus(c, { mentions: [me.id] }), filtered: true });
    await notify(me, c, "status", { status: priv });
    await exec("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(me.id), pad(b.id));
    const res = await me.api.get("/api/v2/notifications");
    expect(groupsOf(res)).toHaveLength(1);
    expect(groupsOf(res)[0]).toMatchObject({ group_key: G, notifications_count: 1, sample_account_ids: [a.id] });
    expect(res.body.accounts.map((x: any) => x.id)).toEqual([a.id]);
    expect(keysOf(await me.api.get("/api/v2/notifications?include_filtered=true"))).toEqual([`ungrouped-${filtered}`, G]);
    expect(keysOf(await me.api.get(`/api/v2/notifications?account_id=${c.id}`))).toEqual([`ungrouped-${filtered}`]);
    expect((await me.api.get("/api/v1/notifications")).body.map((n: any) => n.type)).toEqual(["favourite"]);
    expect((await me.api.get("/api/v1/notifications?include_filtered=1")).body.map((n: any) => n.id)[0]).toBe(filtered);
    expect((await me.api.get(`/api/v1/notifications/${filtered}`)).status).toBe(200);
  });

  it("answers a page of 40 groups in a fixed number of D1 round trips", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    for (let i = 0; i < 42; i++) {
      const s = await insertStatus(me);
      const key = `favourite-${s}-400000`;
      await notify(me, a, "favourite", { status: s, key });
      await notify(me, b, "favourite", { status: s, key });
      if (i % 10 === 0) await notify(me, a, "follow", { key: `follow-40000${i / 10}` });
    }
    const small = await me.api.get("/api/v2/notifications?limit=5");
    const big = await me.api.get("/api/v2/notifications?limit=40");
    expect(groupsOf(small)).toHaveLength(5);
    expect(groupsOf(big)).toHaveLength(40);
    expect(big.body.statuses.length).toBeGreaterThan(30);
    expect(roundTrips(big)).toBeLessThanOrEqual(4);
    expect(roundTrips(big)).toBe(roundTrips(small));
  });

  it("checks tokens and scopes", async () => {
    expect((await anon.get("/api/v2/notifications")).status).toBe(401);
    const wrong = await makeUser(undefined, { scopes: "read:accounts" });
    expect((await wrong.api.get("/api/v2/notifications")).status).toBe(403);
    const readOnly = await makeUser(undefined, { scopes: "read:notifications" });
    expect((await readOnly.api.get("/api/v2/notifications")).status).toBe(200);
    expect((await readOnly.api.post("/api/v2/notifications/clear")).status).toBe(403);
    const me = await makeUser();
    await notify(me, readOnly, "follow");
    expect((await me.api.post("/api/v2/notifications/clear")).body).toEqual({});
    expect(keysOf(await me.api.get("/api/v2/notifications"))).toEqual([]);
  });
});
