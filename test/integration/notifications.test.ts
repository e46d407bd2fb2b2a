import { describe, expect, it } from "vitest";
import { anon, makeUser, links, type Res, type TestUser } from "./helpers";
import { exec, insertStatus, nextId, pad } from "./feeds-fixtures";

const roundTrips = (r: Res) => Number(/dur=(\d+)/.exec(r.headers.get("server-timing") ?? "")?.[1] ?? NaN);

async function notify(to: TestUser, from: { id: string }, type: string, statusId: string | null = null): Promise<string> {
  const id = nextId();
  await exec(
    "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    pad(id),
    pad(to.id),
    pad(from.id),
    type,
    statusId ? pad(statusId) : null,
    pad(nextId()),
    Date.now(),
  );
  return id;
}

describe("notifications", { timeout: 30000 }, () => {
  it("lists 40 per page by default with accounts and statuses, and pages with Link", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const ids: string[] = [];
    for (let i = 0; i < 45; i++) ids.push(await notify(me, a, i % 3 ? "favourite" : "follow", i % 3 ? s : null));
    const p1 = await me.api.get("/api/v1/notifications");
    expect(p1.status).toBe(200);
    expect(p1.body).toHaveLength(40);
    expect(roundTrips(p1)).toBeLessThanOrEqual(3);
    const newest = [...ids].reverse();
    expect(p1.body.map((n: any) => n.id)).toEqual(newest.slice(0, 40));
    const fav = p1.body.find((n: any) => n.type === "favourite");
    expect(fav).toMatchObject({ group_key: `ungrouped-${fav.id}`, account: { id: a.id, acct: a.username }, status: { id: s } });
    expect(typeof fav.created_at).toBe("string");
    const fol = p1.body.find((n: any) => n.type === "follow");
    expect(fol.status).toBeUndefined();
    const p2 = await me.api.get(links(p1.headers).next!);
    expect(p2.body.map((n: any) => n.id)).toEqual(newest.slice(40));
    expect((await me.api.get("/api/v1/notifications?limit=500")).body).toHaveLength(45);
    const min = await me.api.get(`/api/v1/notifications?min_id=${ids[0]}&limit=2`);
    expect(min.body.map((n: any) => n.id)).toEqual([ids[2], ids[1]]);
  });

  it("filters by types[], exclude_types[] and account_id", async () => {
    const [me, a, b] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const m = await insertStatus(a, { mentions: [me.id] });
    const n1 = await notify(me, a, "mention", m);
    const n2 = await notify(me, b, "favourite", s);
    const n3 = await notify(me, b, "follow");
    const ids = async (q: string) => (await me.api.get(`/api/v1/notifications${q}`)).body.map((n: any) => n.id);
    expect(await ids("?types[]=mention")).toEqual([n1]);
    expect(await ids("?types[]=mention&types[]=follow")).toEqual([n3, n1]);
    expect(await ids("?exclude_types[]=follow&exclude_types[]=mention")).toEqual([n2]);
    expect(await ids(`?account_id=${b.id}`)).toEqual([n3, n2]);
    expect(await ids("?account_id=nope")).toEqual([]);
    expect(await ids("?types[]=quote")).toEqual([]);
  });

  // Several types are merged walks, one per type, in groups of five (D1's compound limit): every page, up and down,
  // is the filtered list's own slice, hidden senders and filtered notifications left out within each walk.
  it("pages through several types, and all but some, newest first and from min_id, as one list", async () => {
    const [me, a, hidden] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const s = await insertStatus(me);
    const kinds = [
      "mention",
      "favourite",
      "follow",
      "reblog",
      "poll",
      "update",
      "status",
      "quote",
      "admin.sign_up",
      "favourite",
      "quoted_update",
      "follow_request",
    ];
    const all: { id: string; type: string }[] = [];
    for (let i = 0; i < 36; i++) {
      const type = kinds[i % kinds.length]!;
      all.push({ id: await notify(me, i % 7 === 3 ? hidden : a, type, type === "follow" ? null : s), type });
    }
    await exec("INSERT INTO mutes (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(me.id), pad(hidden.id));
    const shown = all.filter((_, i) => i % 7 !== 3).reverse();
    const walkDown = async (q: string) => {
      const out: string[] = [];
      let path: string | undefined = `/api/v1/notifications?${q}&limit=4`;
      for (let n = 0; path && n < 20; n++) {
        const r = await me.api.get(path);
        expect(r.status, path).toBe(200);
        out.push(...r.body.map((x: any) => x.id));
        path = r.body.length ? links(r.headers).next : undefined;
      }
      return out;
    };
    const walkUp = async (q: string) => {
      const out: string[] = [];
      let min = "0";
      for (let n = 0; n < 20; n++) {
        const r = await me.api.get(`/api/v1/notifications?${q}&limit=4&min_id=${min}`);
        if (!r.body.length) break;
        out.unshift(...r.body.map((x: any) => x.id));
        min = r.body[0].id;
      }
      return out;
    };
    const cases: [string, (t: string) => boolean][] = [
      ["types[]=mention&types[]=follow&types[]=poll", (t) => ["mention", "follow", "poll"].includes(t)],
      ["exclude_types[]=favourite&exclude_types[]=reblog", (t) => t !== "favourite" && t !== "reblog"],
      ["types[]=favourite&types[]=quote&types[]=nonsense&exclude_types[]=quote", (t) => t === "favourite"],
    ];
    for (const [q, keep] of cases) {
      const expected = shown.filter((x) => keep(x.type)).map((x) => x.id);
      expect(expected.length, q).toBeGreaterThan(4);
      expect(await walkDown(q), q).toEqual(expected);
      expect(await walkUp(q), q).toEqual(expected);
      const count = await me.api.get(`/api/v1/notifications/unread_count?${q}`);
      expect(count.body.count, q).toBe(expected.length);
    }
  });

  it("leaves out blocked or muted senders and statuses the viewer cannot see", async () => {
    const [me, a, b, c] = await Promise.all([makeUser(), makeUser(), makeUser(), makeUser()]);
    const keep = await notify(me, a, "follow");
    await notify(me, b, "follow");
    await notify(me, c, "follow");
    const priv = await insertStatus(a, { visibility: "private" });
    await notify(me, a, "status", priv);
    await exec("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(me.id), pad(b.id));
    await exec(
      "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, created_at) VALUES (?1, ?2, ?3, 1, 0)",
      pad(nextId()),
      pad(me.id),
      pad(c.id),
    );
    expect((await me.api.get("/api/v1/notifications")).body.map((n: any) => n.id)).toEqual([keep]);
  });

  it("shows, dismisses and clears only one's own notifications (B14)", async () => {
    const [me, other, a] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const mine = await notify(me, a, "follow");
    const mine2 = await notify(me, a, "follow");
    const theirs = await notify(other, a, "follow");
    const one = await me.api.get(`/api/v1/notifications/${mine}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: mine, type: "follow", account: { id: a.id } });
    expect((await me.api.get(`/api/v1/notifications/${theirs}`)).status).toBe(404);
    expect((await me.api.get(`/api/v1/notifications/abc`)).status).toBe(404);
    expect((await me.api.post(`/api/v1/notifications/${theirs}/dismiss`)).status).toBe(404);
    expect((await other.api.get(`/api/v1/notifications/${theirs}`)).status).toBe(200);

    expect((await me.api.post(`/api/v1/notifications/${mine}/dismiss`)).status).toBe(200);
    expect((await me.api.get(`/api/v1/notifications/${mine}`)).status).toBe(404);
    expect((await me.api.post("/api/v1/notifications/dismiss", { id: mine2 })).status).toBe(200);
    expect((await me.api.get("/api/v1/notifications")).body).toEqual([]);

    await notify(me, a, "follow");
    const cleared = await me.api.post("/api/v1/notifications/clear");
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({});
    expect((await me.api.get("/api/v1/notifications")).body).toEqual([]);
    expect((await other.api.get("/api/v1/notifications")).body).toHaveLength(1);
  });

  it("the legacy DELETE /:id and DELETE /destroy_multiple remove only one's own notifications", async () => {
    const [me, other, a] = await Promise.all([makeUser(), makeUser(), makeUser()]);
    const n1 = await notify(me, a, "follow");
    const n2 = await notify(me, a, "follow");
    const n3 = await notify(me, a, "follow");
    const theirs = await notify(other, a, "follow");
    expect((await me.api.delete(`/api/v1/notifications/${theirs}`)).status).toBe(404);
    expect((await me.api.delete(`/api/v1/notifications/${n1}`)).body).toEqual({});
    expect((await me.api.delete(`/api/v1/notifications/${n1}`)).status).toBe(404);
    expect((await me.api.delete("/api/v1/notifications/destroy_multiple", { ids: [n2, theirs, "junk"] })).body).toEqual({});
    expect((await me.api.get("/api/v1/notifications")).body.map((n: any) => n.id)).toEqual([n3]);
    expect((await other.api.get("/api/v1/notifications")).body.map((n: any) => n.id)).toEqual([theirs]);
    expect((await me.api.delete("/api/v1/notifications/destroy_multiple")).status).toBe(200);
  });

  it("counts unread notifications after the notifications marker", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await notify(me, a, "follow"));
    expect((await me.api.get("/api/v1/notifications/unread_count")).body).toEqual({ count: 5 });
    expect((await me.api.get("/api/v1/notifications/unread_count?limit=2")).body).toEqual({ count: 2 });
    await me.api.post("/api/v1/markers", { notifications: { last_read_id: ids[2] } });
    expect((await me.api.get("/api/v1/notifications/unread_count")).body).toEqual({ count: 2 });
  });

  it("checks tokens and scopes", async () => {
    expect((await anon.get("/api/v1/notifications")).status).toBe(401);
    const wrong = await makeUser(undefined, { scopes: "read:accounts" });
    expect((await wrong.api.get("/api/v1/notifications")).status).toBe(403);
    const readOnly = await makeUser(undefined, { scopes: "read:notifications" });
    expect((await readOnly.api.get("/api/v1/notifications")).status).toBe(200);
    expect((await readOnly.api.post("/api/v1/notifications/clear")).status).toBe(403);
    expect((await anon.post("/api/v1/notifications/clear")).status).toBe(401);
  });
});
