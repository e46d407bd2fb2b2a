import { describe, expect, it } from "vitest";
import { anon, links, makeUser } from "./helpers";
import { exec, insertStatus, nextId, pad } from "./feeds-fixtures";

describe("bookmarks and favourites lists", { timeout: 30000 }, () => {
  for (const [path, table, scope] of [
    ["/api/v1/bookmarks", "bookmarks", "read:bookmarks"],
    ["/api/v1/favourites", "favourites", "read:favourites"],
  ] as const) {
    it(`${path}: ordered by the ${table} row, Link cursors are row ids, min_id works`, async () => {
      const [me, a] = await Promise.all([makeUser(), makeUser()]);
      const statuses: string[] = [];
      for (let i = 0; i < 5; i++) statuses.push(await insertStatus(a));
      // Marked in a different order than posted: the list follows the marking order.
      const order = [statuses[2], statuses[0], statuses[4], statuses[1], statuses[3]];
      const rows: string[] = [];
      for (const s of order) {
        const id = nextId();
        rows.push(id);
        await exec(`INSERT INTO ${table} (id, account_id, status_id, created_at) VALUES (?1, ?2, ?3, 0)`, pad(id), pad(me.id), pad(s));
      }
      const p1 = await me.api.get(`${path}?limit=2`);
      expect(p1.status).toBe(200);
      expect(p1.body.map((s: any) => s.id)).toEqual([order[4], order[3]]);
      expect(p1.body[0][table === "bookmarks" ? "bookmarked" : "favourited"]).toBe(true);
      const l1 = links(p1.headers);
      expect(l1.next).toContain(`max_id=${rows[3]}`);
      expect(l1.prev).toContain(`min_id=${rows[4]}`);
      const p2 = await me.api.get(l1.next!);
      expect(p2.body.map((s: any) => s.id)).toEqual([order[2], order[1]]);
      const min = await me.api.get(`${path}?min_id=${rows[0]}&limit=2`);
      expect(min.body.map((s: any) => s.id)).toEqual([order[2], order[1]]);
      const since = await me.api.get(`${path}?since_id=${rows[0]}&limit=2`);
      expect(since.body.map((s: any) => s.id)).toEqual([order[4], order[3]]);
      expect((await a.api.get(path)).body).toEqual([]);
      expect((await anon.get(path)).status).toBe(401);
      const wrong = await makeUser(undefined, { scopes: "read:statuses" });
      expect((await wrong.api.get(path)).status).toBe(403);
      const right = await makeUser(undefined, { scopes: scope });
      expect((await right.api.get(path)).status).toBe(200);
    });
  }

  it("drops statuses the viewer can no longer see", async () => {
    const [me, a] = await Promise.all([makeUser(), makeUser()]);
    const priv = await insertStatus(a, { visibility: "private" });
    const pub = await insertStatus(a);
    for (const s of [priv, pub])
      await exec("INSERT INTO bookmarks (id, account_id, status_id, created_at) VALUES (?1, ?2, ?3, 0)", pad(nextId()), pad(me.id), pad(s));
    expect((await me.api.get("/api/v1/bookmarks")).body.map((s: any) => s.id)).toEqual([pub]);
  });
});
