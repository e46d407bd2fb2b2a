// The notification policy (GET/PATCH /api/v2/notifications/policy and the v1 shape), its effect where notifications
// are created (drop: no row; filter: held back, a request for mentions), and notification requests (list, show,
// accept, dismiss, bulk, merged).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anon, links, makeUser, type TestUser } from "./helpers";
import { exec, follow, insertStatus, nextId, pad } from "./feeds-fixtures";

const DAY = 24 * 3_600_000;

interface Row {
  type: string;
  from: string;
  filtered: number;
  group_key: string | null;
}

/** Every notification row of `u`, oldest first, as stored. */
async function rows(u: TestUser): Promise<Row[]> {
  const r = await env.DB.prepare(
    "SELECT type, ltrim(from_account_id, '0') AS \"from\", filtered, group_key FROM notifications WHERE account_id = ?1 ORDER BY id",
  )
    .bind(pad(u.id))
    .all<Row>();
  return r.results;
}

async function setPolicy(u: TestUser, p: Record<string, string>) {
  const res = await u.api.patch("/api/v2/notifications/policy", p);
  expect(res.status).toBe(200);
  return res.body;
}

const mention = (from: TestUser, to: TestUser, o: { visibility?: string; in_reply_to_id?: string; text?: string } = {}) =>
  from.api.post("/api/v1/statuses", { status: `@${to.username} ${o.text ?? "hello"}`, visibility: o.visibility ?? "public", in_reply_to_id: o.in_reply_to_id });

const favourite = async (from: TestUser, s: string) => expect((await from.api.post(`/api/v1/statuses/${s}/favourite`)).status).toBe(200);

describe("notification policy", { timeout: 60000 }, () => {
  it("serves Mastodon's defaults, changes categories, and speaks the v1 shape", async () => {
    const me = await makeUser();
    const def = await me.api.get("/api/v2/notifications/policy");
    expect(def.status).toBe(200);
    expect(def.body).toEqual({
      for_not_following: "accept",
      for_not_followers: "accept",
      for_new_accounts: "accept",
      for_private_mentions: "filter",
      for_limited_accounts: "filter",
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    expect((await me.api.get("/api/v1/notifications/policy")).body).toEqual({
      filter_not_following: false,
      filter_not_followers: false,
      filter_new_accounts: false,
      filter_private_mentions: true,
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    expect(await setPolicy(me, { for_not_following: "drop", for_new_accounts: "filter" })).toMatchObject({
      for_not_following: "drop",
      for_not_followers: "accept",
      for_new_accounts: "filter",
      for_private_mentions: "filter",
    });
    expect(await setPolicy(me, { for_limited_accounts: "accept" })).toMatchObject({ for_not_following: "drop", for_limited_accounts: "accept" });
    const bad = await me.api.patch("/api/v2/notifications/policy", { for_not_followers: "maybe" });
    expect(bad.status).toBe(422);
    expect((await me.api.patch("/api/v2/notifications/policy", { for_not_followers: ["drop"] })).status).toBe(422);
    // form-encoded, as some clients send it
    expect((await me.api.patch("/api/v2/notifications/policy", { for_not_followers: "filter" }, "form")).body.for_not_followers).toBe("filter");

    const v1 = await me.api.patch("/api/v1/notifications/policy", { filter_not_following: false, filter_private_mentions: "false" });
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ filter_not_following: false, filter_not_followers: true, filter_new_accounts: true, filter_private_mentions: false });
    expect((await me.api.get("/api/v2/notifications/policy")).body).toMatchObject({
      for_not_following: "accept",
      for_not_followers: "filter",
      for_new_accounts: "filter",
      for_private_mentions: "accept",
      for_limited_accounts: "accept",
    });

    expect((await anon.get("/api/v2/notifications/policy")).status).toBe(401);
    const readOnly = await makeUser(undefined, { scopes: "read:notifications" });
    expect((await readOnly.api.get("/api/v2/notifications/policy")).status).toBe(200);
    expect((await readOnly.api.patch("/api/v2/notifications/policy", { for_not_following: "drop" })).status).toBe(403);
    expect((await readOnly.api.patch("/api/v1/notifications/policy", { filter_not_following: true })).status).toBe(403);
  });

  it("for_not_following: drops or filters notifications from accounts the recipient does not follow", async () => {
    const [me, stranger, friend, other] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(me, friend);
    const s = await insertStatus(me);
    await setPolicy(me, { for_not_following: "drop" });
    await favourite(stranger, s);
    await favourite(friend, s);
    expect(await rows(me)).toEqual([{ type: "favourite", from: friend.id, filtered: 0, group_key: expect.stringMatching(/^favourite-/) }]);

    await setPolicy(me, { for_not_following: "filter" });
    await favourite(other, s);
    const filtered = (await rows(me)).at(-1)!;
    expect(filtered).toEqual({ type: "favourite", from: other.id, filtered: 1, group_key: null });
    // Held back: out of both lists and counts, there when asked for or when listing that sender.
    expect((await me.api.get("/api/v1/notifications")).body.map((n: any) => n.account.id)).toEqual([friend.id]);
    expect((await me.api.get("/api/v2/notifications")).body.notification_groups.map((g: any) => g.notifications_count)).toEqual([1]);
    expect((await me.api.get("/api/v1/notifications/unread_count")).body.count).toBe(1);
    expect((await me.api.get("/api/v1/notifications?include_filtered=true")).body.map((n: any) => n.account.id)).toEqual([other.id, friend.id]);
    expect((await me.api.get(`/api/v1/notifications?account_id=${other.id}`)).body).toHaveLength(1);
    // A favourite opens no request: only mentions do (Mastodon's update_notification_request!).
    expect((await me.api.get("/api/v1/notifications/requests")).body).toEqual([]);
  });

  it("for_not_followers: counts only followers of more than three days", async () => {
    const [me, stranger, newFollower, oldFollower] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await setPolicy(me, { for_not_followers: "filter" });
    await follow(newFollower, me);
    await exec(
      "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?1, ?2, ?3, 1, 0, ?4)",
      pad(nextId()),
      pad(oldFollower.id),
      pad(me.id),
      Date.now() - 4 * DAY,
    );
    for (const u of [stranger, newFollower, oldFollower]) expect((await mention(u, me)).status).toBe(200);
    expect((await rows(me)).map((r) => [r.from, r.filtered])).toEqual([
      [stranger.id, 1],
      [newFollower.id, 1],
      [oldFollower.id, 0],
    ]);
    await setPolicy(me, { for_not_followers: "drop" });
    await mention(stranger, me);
    expect(await rows(me)).toHaveLength(3);
  });

  it("for_new_accounts: accounts younger than 30 days, unless the recipient follows them", async () => {
    const [me, young, old, followed] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await exec("UPDATE accounts SET created_at = ?1 WHERE id = ?2", Date.now() - 40 * DAY, pad(old.id));
    await follow(me, followed);
    await setPolicy(me, { for_new_accounts: "drop" });
    const s = await insertStatus(me);
    for (const u of [young, old, followed]) await favourite(u, s);
    expect((await rows(me)).map((r) => r.from)).toEqual([old.id, followed.id]);
    await setPolicy(me, { for_new_accounts: "filter" });
    await young.api.post(`/api/v1/accounts/${me.id}/follow`);
    expect((await rows(me)).at(-1)).toMatchObject({ type: "follow", from: young.id, filtered: 1, group_key: null });
  });

  it("for_private_mentions: direct mentions from strangers, except replies to the recipient's own direct mention", async () => {
    const [me, stranger, friend, pal] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(me, friend);
    // Default: filter.
    const dm = await mention(stranger, me, { visibility: "direct" });
    expect(dm.status).toBe(200);
    await mention(friend, me, { visibility: "direct" });
    await mention(stranger, me, { visibility: "public" });
    // The recipient wrote to pal privately; pal's direct answer is let through.
    const mine = await mention(me, pal, { visibility: "direct" });
    const answer = await mention(pal, me, { visibility: "direct", in_reply_to_id: mine.body.id });
    expect(answer.status).toBe(200);
    // A direct reply to something else of pal's is not an answer to the recipient.
    const palOwn = await pal.api.post("/api/v1/statuses", { status: "thinking", visibility: "public" });
    await mention(pal, me, { visibility: "direct", in_reply_to_id: palOwn.body.id });
    expect((await rows(me)).map((r) => [r.from, r.filtered])).toEqual([
      [stranger.id, 1],
      [friend.id, 0],
      [stranger.id, 0],
      [pal.id, 0],
      [pal.id, 1],
    ]);
    await setPolicy(me, { for_private_mentions: "drop" });
    await mention(stranger, me, { visibility: "direct" });
    expect(await rows(me)).toHaveLength(5);
    await setPolicy(me, { for_private_mentions: "accept" });
    await mention(stranger, me, { visibility: "direct" });
    expect((await rows(me)).at(-1)).toMatchObject({ from: stranger.id, filtered: 0 });
  });

  it("for_limited_accounts: silenced senders the recipient does not follow", async () => {
    const [me, limited, limitedFriend] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    for (const u of [limited, limitedFriend]) await exec("UPDATE accounts SET silenced_at = ?1 WHERE id = ?2", Date.now(), pad(u.id));
    await follow(me, limitedFriend);
    const s = await insertStatus(me);
    await favourite(limited, s);
    await favourite(limitedFriend, s);
    expect((await rows(me)).map((r) => [r.from, r.filtered])).toEqual([
      [limited.id, 1],
      [limitedFriend.id, 0],
    ]);
    await setPolicy(me, { for_limited_accounts: "drop" });
    await limited.api.post(`/api/v1/statuses/${s}/reblog`);
    expect(await rows(me)).toHaveLength(2);
  });

  it("drops notifications from blocked domains unless the sender is followed, and from muted conversations", async () => {
    const [me, far, farFriend, other] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    for (const u of [far, farFriend]) await exec("UPDATE accounts SET domain = 'blocked.example' WHERE id = ?1", pad(u.id));
    await exec("INSERT INTO account_domain_blocks (id, account_id, domain, created_at) VALUES (?1, ?2, 'blocked.example', 0)", pad(nextId()), pad(me.id));
    await follow(me, farFriend);
    const s = await insertStatus(me);
    await favourite(far, s);
    await favourite(farFriend, s);
    expect((await rows(me)).map((r) => r.from)).toEqual([farFriend.id]);

    const thread = await me.api.post("/api/v1/statuses", { status: "a thread" });
    expect((await me.api.post(`/api/v1/statuses/${thread.body.id}/mute`)).status).toBe(200);
    await favourite(other, thread.body.id);
    await mention(other, me, { in_reply_to_id: thread.body.id });
    expect(await rows(me)).toHaveLength(1);
  });

  it("never holds back types that are not filterable (update, poll, status, admin.*)", async () => {
    const [me, stranger] = await Promise.all([makeUser(), makeUser()]);
    await setPolicy(me, { for_not_following: "drop", for_not_followers: "drop", for_new_accounts: "drop" });
    const s = await stranger.api.post("/api/v1/statuses", { status: "original" });
    expect((await me.api.post(`/api/v1/statuses/${s.body.id}/reblog`)).status).toBe(200);
    expect((await stranger.api.put(`/api/v1/statuses/${s.body.id}`, { status: "edited" })).status).toBe(200);
    expect(await rows(me)).toEqual([{ type: "update", from: stranger.id, filtered: 0, group_key: null }]);
  });
});

describe("notification requests", { timeout: 60000 }, () => {
  /** me with filtered mentions from a (2) and b (1), and an accepted one from friend. */
  async function setup() {
    const [me, a, b, friend] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    await follow(me, friend);
    await setPolicy(me, { for_not_following: "filter" });
    await mention(a, me, { text: "one" });
    const last = await mention(a, me, { text: "two" });
    await mention(b, me);
    await mention(friend, me);
    return { me, a, b, friend, lastOfA: last.body.id as string };
  }

  it("lists and shows requests, with the summary in the policy", async () => {
    const { me, a, b, lastOfA } = await setup();
    const list = await me.api.get("/api/v1/notifications/requests");
    expect(list.status).toBe(200);
    expect(list.body.map((r: any) => r.account.id)).toEqual([b.id, a.id]);
    const ra = list.body[1];
    expect(ra).toMatchObject({ notifications_count: "2", account: { id: a.id }, last_status: { id: lastOfA } });
    expect(typeof ra.id).toBe("string");
    expect(Number.isNaN(Date.parse(ra.created_at))).toBe(false);
    expect(Number.isNaN(Date.parse(ra.updated_at))).toBe(false);
    expect((await me.api.get("/api/v2/notifications/policy")).body.summary).toEqual({ pending_requests_count: 2, pending_notifications_count: 3 });

    const p1 = await me.api.get("/api/v1/notifications/requests?limit=1");
    expect(p1.body.map((r: any) => r.account.id)).toEqual([b.id]);
    const p2 = await me.api.get(links(p1.headers).next!);
    expect(p2.body.map((r: any) => r.account.id)).toEqual([a.id]);
    expect((await me.api.get(`/api/v1/notifications/requests?min_id=${ra.id}`)).body.map((r: any) => r.account.id)).toEqual([b.id]);

    const one = await me.api.get(`/api/v1/notifications/requests/${ra.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(ra);
    const stranger = await makeUser();
    expect((await stranger.api.get(`/api/v1/notifications/requests/${ra.id}`)).status).toBe(404);
    expect((await me.api.get("/api/v1/notifications/requests/nope")).status).toBe(404);
    expect((await anon.get("/api/v1/notifications/requests")).status).toBe(401);
    // The sender's filtered notifications, as the web app lists them.
    expect((await me.api.get(`/api/v1/notifications?account_id=${a.id}`)).body).toHaveLength(2);
  });

  it("accepts a request: the sender's notifications come through, now and later", async () => {
    const { me, a, b } = await setup();
    const [rb, ra] = (await me.api.get("/api/v1/notifications/requests")).body;
    expect((await me.api.post(`/api/v1/notifications/requests/${ra.id}/accept`)).body).toEqual({});
    expect((await me.api.get("/api/v1/notifications/requests")).body.map((r: any) => r.id)).toEqual([rb.id]);
    expect((await me.api.get("/api/v1/notifications/requests/merged")).body).toEqual({ merged: true });
    const v1 = (await me.api.get("/api/v1/notifications")).body.map((n: any) => n.account.id);
    expect(v1.filter((x: string) => x === a.id)).toHaveLength(2);
    expect(v1).not.toContain(b.id);
    await mention(a, me, { text: "three" });
    expect((await rows(me)).at(-1)).toMatchObject({ from: a.id, filtered: 0 });
    expect((await me.api.get("/api/v2/notifications/policy")).body.summary).toEqual({ pending_requests_count: 1, pending_notifications_count: 1 });
    expect((await me.api.post(`/api/v1/notifications/requests/${ra.id}/accept`)).status).toBe(404);
    const other = await makeUser();
    expect((await other.api.post(`/api/v1/notifications/requests/${rb.id}/accept`)).status).toBe(404);
    const readOnly = await makeUser(undefined, { scopes: "read:notifications" });
    expect((await readOnly.api.post(`/api/v1/notifications/requests/${rb.id}/accept`)).status).toBe(403);
  });

  it("dismisses a request with its notifications; a new mention opens a new one", async () => {
    const { me, a, b } = await setup();
    const [rb, ra] = (await me.api.get("/api/v1/notifications/requests")).body;
    expect((await me.api.post(`/api/v1/notifications/requests/${ra.id}/dismiss`)).body).toEqual({});
    expect((await me.api.get("/api/v1/notifications/requests")).body.map((r: any) => r.id)).toEqual([rb.id]);
    expect((await rows(me)).filter((r) => r.from === a.id)).toEqual([]);
    expect((await me.api.post(`/api/v1/notifications/requests/${ra.id}/dismiss`)).status).toBe(404);
    await mention(a, me);
    const again = (await me.api.get("/api/v1/notifications/requests")).body;
    expect(again.map((r: any) => r.account.id)).toEqual([a.id, b.id]);
    expect(again[0].notifications_count).toBe("1");
  });

  it("accepts and dismisses in bulk with id[]", async () => {
    const { me, a, b } = await setup();
    const c = await makeUser();
    await mention(c, me);
    const [rc, rb, ra] = (await me.api.get("/api/v1/notifications/requests")).body;
    expect(rc.account.id).toBe(c.id);
    const acc = await me.api.post(
      "/api/v1/notifications/requests/accept",
      new URLSearchParams([
        ["id[]", ra.id],
        ["id[]", rb.id],
        ["id[]", "junk"],
      ]),
      "form",
    );
    expect(acc.status).toBe(200);
    expect((await me.api.get("/api/v1/notifications/requests")).body.map((r: any) => r.id)).toEqual([rc.id]);
    expect((await rows(me)).filter((r) => r.from === a.id || r.from === b.id).every((r) => r.filtered === 0)).toBe(true);
    expect((await me.api.post("/api/v1/notifications/requests/dismiss", { id: [rc.id] })).status).toBe(200);
    expect((await me.api.get("/api/v1/notifications/requests")).body).toEqual([]);
    expect((await rows(me)).filter((r) => r.from === c.id)).toEqual([]);
    expect((await me.api.get("/api/v2/notifications/policy")).body.summary).toEqual({ pending_requests_count: 0, pending_notifications_count: 0 });
  });

  it("keeps the count when filtered mentions go one by one, and drops the request with the last", async () => {
    const { me, a } = await setup();
    const ids = (await me.api.get(`/api/v1/notifications?account_id=${a.id}`)).body.map((n: any) => n.id);
    expect((await me.api.post(`/api/v1/notifications/${ids[0]}/dismiss`)).status).toBe(200);
    const ra = (await me.api.get("/api/v1/notifications/requests")).body.find((r: any) => r.account.id === a.id);
    expect(ra.notifications_count).toBe("1");
    expect((await me.api.post(`/api/v2/notifications/ungrouped-${ids[1]}/dismiss`)).status).toBe(200);
    expect((await me.api.get("/api/v1/notifications/requests")).body.map((r: any) => r.account.id)).not.toContain(a.id);
  });
});
