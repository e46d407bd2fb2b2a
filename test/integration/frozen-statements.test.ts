// Frozen statements (src/db/frozen.ts): the text built once, values bound per call, rows mapped as drizzle's own
// select maps them, whether awaited alone or run inside a batch.
import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { frozenHead, frozenSelect, frozenSql } from "../../src/db/frozen";
import { accountRows } from "../../src/db/table-rows";
import { accounts, oauthAccessTokens, users } from "../../src/db/schema";
import { padId } from "../../src/lib/ids";
import { db, makeUser } from "./helpers";

describe("frozen statements", () => {
  it("read a whole row as drizzle's select does: ids unpadded, booleans and JSON decoded", async () => {
    const u = await makeUser();
    const d = db();
    const [mine] = await accountRows(d, { where: eq(accounts.id, u.id), limit: 1 });
    const [theirs] = await d.select().from(accounts).where(eq(accounts.id, u.id)).limit(1);
    expect(mine).toEqual(theirs);
    expect(mine?.id).toBe(u.id);
    expect(typeof mine?.locked).toBe("boolean");
  });

  it("bind new values each call, order by one or several keys, and limit", async () => {
    const [a, b, c] = [await makeUser(), await makeUser(), await makeUser()];
    const d = db();
    const ids = [a.id, b.id, c.id];
    const where = sql`${accounts.id} IN (${sql.join(
      ids.map((id) => sql`${id.padStart(20, "0")}`),
      sql`, `,
    )})`;
    const down = await accountRows(d, { where, orderBy: desc(accounts.id) });
    expect(down.map((r) => r.id)).toEqual([...ids].reverse());
    const up = await accountRows(d, { where, orderBy: [asc(accounts.domain), accounts.id], limit: 2 });
    expect(up.map((r) => r.id)).toEqual(ids.slice(0, 2));
    expect((await accountRows(d, { where: eq(accounts.id, b.id) })).map((r) => r.id)).toEqual([b.id]);
    expect(await accountRows(d, { where: eq(accounts.id, "1") })).toEqual([]);
  });

  it("run inside a batch with other statements, their results in order", async () => {
    const u = await makeUser();
    const d = db();
    const [rows, raw, again] = await d.batch([
      accountRows(d, { where: eq(accounts.id, u.id), limit: 1 }),
      d.all<{ n: number }>(sql`SELECT 41 + 1 AS n`),
      accountRows(d, { where: and(eq(accounts.username, u.username), isNull(accounts.domain)), limit: 1 }),
    ]);
    expect(rows[0]?.id).toBe(u.id);
    expect(raw).toEqual([{ n: 42 }]);
    expect(again[0]?.username).toBe(u.username);
  });

  it("build the text once, and map a left join that found nothing to null", async () => {
    let built = 0;
    const tokenRows = frozenSelect((d) => {
      built++;
      return d
        .select({ token: oauthAccessTokens, user: users })
        .from(oauthAccessTokens)
        .leftJoin(users, eq(users.id, oauthAccessTokens.userId))
        .where(eq(oauthAccessTokens.id, sql.placeholder("id")))
        .limit(1);
    });
    const u = await makeUser();
    const d = db();
    const [tok] = await d.select().from(oauthAccessTokens).where(eq(oauthAccessTokens.userId, u.userId)).limit(1);
    const appToken = `${tok!.id}0`;
    await d.insert(oauthAccessTokens).values({ ...tok!, id: appToken, tokenHash: `${tok!.tokenHash}-app`, userId: null });
    // A placeholder's value is bound as given, not through the column's encoder: ids go in padded, as stored.
    const [withUser] = await tokenRows(d, { id: padId(tok!.id) });
    const [withoutUser] = await tokenRows(db(), { id: padId(appToken) });
    expect(withUser?.user?.id).toBe(u.userId);
    expect(withoutUser?.token.id).toBe(appToken);
    expect(withoutUser?.user).toBeNull();
    expect(built).toBe(1);
    // A head that binds values is refused: they belong in the tail, where each call binds its own.
    const bad = frozenHead((d2) => d2.select().from(accounts).where(eq(accounts.id, "1")));
    expect(() => bad(d, {})).toThrow(/head must bind no values/);
  });

  it("freeze a raw statement's text, binding placeholders and the builder's own values per call", async () => {
    const d = db();
    let built = 0;
    const pair = frozenSql(() => {
      built++;
      return sql`SELECT ${sql.placeholder("a")} AS a, ${41} + ${sql.placeholder("b")} AS b`;
    });
    const [one, two] = await d.batch([d.all<{ a: string; b: number }>(pair(d, { a: "x", b: 1 })), d.all<{ a: string; b: number }>(pair(d, { a: "y", b: 2 }))]);
    expect(one).toEqual([{ a: "x", b: 42 }]);
    expect(two).toEqual([{ a: "y", b: 43 }]);
    expect(await d.all(pair(d, { a: null, b: 0 }))).toEqual([{ a: null, b: 41 }]);
    expect(built).toBe(1);
    // A `?` inside the text's own literals would shift every value after it: refused when the text is made.
    const literal = frozenSql(() => sql`SELECT '?' AS q, ${sql.placeholder("a")} AS a`);
    expect(() => literal(d, { a: 1 })).toThrow(/not a parameter/);
  });
});
