// Frozen statements (src/db/frozen.ts): the text built once, values bound per call, rows mapped as drizzle's own
// select maps them, whether awaited alone or run inside a batch.
import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bindText, bindTextWith, boundText } from "../../src/db/bound-sql";
import { internals } from "../../src/db/client";
import { frozenHead, frozenInsert, frozenSelect, frozenSql } from "../../src/db/frozen";
import { insertStatus } from "../../src/db/inserts";
import { accountRows } from "../../src/db/table-rows";
import { accounts, oauthAccessTokens, statuses, users } from "../../src/db/schema";
import { padId } from "../../src/lib/text/ids";
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

  it("answer drizzle with the text made once, and still read as their pieces inside another statement", async () => {
    const d = db();
    const t = boundText("SELECT $a AS a, $b + 1 AS b");
    const one = bindText(t, { a: "x", b: 41 });
    const two = bindText(t, { a: "y", b: 1 });
    const q1 = internals(d).dialect.sqlToQuery(one);
    expect(q1).toEqual({ sql: "SELECT ? AS a, ? + 1 AS b", params: ["x", 41] });
    // The same string each call: nothing joined again.
    expect(internals(d).dialect.sqlToQuery(two).sql).toBe(q1.sql);
    expect(await d.all(two)).toEqual([{ a: "y", b: 2 }]);
    // Embedded in another sql``, its chunks build the same text around the outer values.
    const outer = sql`SELECT * FROM (${one}) WHERE b > ${0}`;
    expect(internals(d).dialect.sqlToQuery(outer)).toMatchObject({ sql: "SELECT * FROM (SELECT ? AS a, ? + 1 AS b) WHERE b > ?", params: ["x", 41, 0] });
    expect(await d.all(outer)).toEqual([{ a: "x", b: 42 }]);
    // Holes filled per call with built SQL: the whole text joined once per shape, each hole's values in its place.
    const h = boundText("SELECT $a AS a, $b + 1 AS b WHERE a IN $ids AND b > $min");
    const ids = (n: number) =>
      sql`(${sql.join(
        Array.from({ length: n }, (_, i) => sql`${`v${i}`}`),
        sql`, `,
      )})`;
    const tailed = bindTextWith(d, h, { a: "v1", b: 1, min: 0 }, { ids: ids(2) });
    const again = bindTextWith(d, h, { a: "v0", b: 2, min: 5 }, { ids: ids(2) });
    const qt = internals(d).dialect.sqlToQuery(tailed);
    expect(qt).toEqual({ sql: "SELECT ? AS a, ? + 1 AS b WHERE a IN (?, ?) AND b > ?", params: ["v1", 1, "v0", "v1", 0] });
    expect(internals(d).dialect.sqlToQuery(again).sql).toBe(qt.sql);
    expect(await d.all(tailed)).toEqual([{ a: "v1", b: 2 }]);
    expect(await d.all(again)).toEqual([]);
    expect(await d.all(bindTextWith(d, h, { a: "v2", b: 1, min: 0 }, { ids: ids(2) }))).toEqual([]);
    expect(await d.all(bindTextWith(d, h, { a: "v2", b: 0, min: 0 }, { ids: ids(3) }))).toEqual([{ a: "v2", b: 1 }]);
    expect(() => bindTextWith(d, h, { a: "v2", b: 0 }, { ids: ids(3) })).toThrow(/no value for \$min/);
    // A `?` in a literal of the text would be read as a parameter: refused when the text is made.
    expect(() => boundText("SELECT '?' AS q, $a AS a")).toThrow(/parameter/);
  });

  it("insert a row as drizzle's own insert does: the same text and values, defaults and encoders included", async () => {
    const u = await makeUser();
    const d = db();
    const row = {
      id: "1234567890123",
      uri: "https://remote.example/notes/1",
      accountId: u.id,
      local: false,
      visibility: "public" as const,
      sensitive: true,
      content: "<p>hi</p>",
      mediaIds: ["1", "2"],
      createdAt: 1_700_000_000_000,
      updatedAt: 1_700_000_000_000,
    };
    const mine = internals(d).dialect.sqlToQuery((insertStatus(d, row) as unknown as { getSQL(): never }).getSQL());
    const theirs = d.insert(statuses).values(row).toSQL();
    // The same statement once its values are in place (drizzle writes `null` for a column with no value and no
    // default; the frozen text binds null there).
    const inline = (q: { sql: string; params: unknown[] }) => {
      let i = 0;
      return q.sql.replaceAll("?", () => JSON.stringify(q.params[i++]));
    };
    expect(inline(mine)).toBe(inline(theirs));
    expect(mine.params).toContain('["1","2"]');
    await insertStatus(d, row);
    const [stored] = await d.select().from(statuses).where(eq(statuses.uri, row.uri));
    expect(stored).toMatchObject({ id: row.id, accountId: u.id, sensitive: true, mediaIds: ["1", "2"], local: false, reblogsCount: 0 });
    // In a batch, and with what the builder adds (a conflict clause), built once.
    const again = frozenInsert(statuses, (q) => q.onConflictDoNothing());
    const [r1] = await d.batch([again(d, row), d.all<{ n: number }>(sql`SELECT count(*) AS n FROM statuses WHERE uri = ${row.uri}`)]);
    expect((r1 as D1Result).meta.changes).toBe(0);
    // SQL where a value belongs is refused: a frozen insert binds values only.
    expect(() => insertStatus(d, { ...row, content: sql`'x'` as never })).toThrow(/bind values only/);
  });

  it("map rows as drizzle maps them: nested tables, computed fields with their decoders, a join that found nothing", async () => {
    const [a, b] = [await makeUser(), await makeUser()];
    const d = db();
    const build = (x: typeof d) =>
      x
        .select({
          me: accounts,
          user: users,
          n: sql<number>`41 + 1`.mapWith(Number),
          flag: accounts.locked,
          deep: { id: accounts.id, name: accounts.username },
        })
        .from(accounts)
        .leftJoin(users, and(eq(users.accountId, accounts.id), eq(users.accountId, sql.placeholder("none"))))
        .where(sql`${accounts.id} IN (${sql.placeholder("a")}, ${sql.placeholder("b")})`)
        .orderBy(accounts.id);
    const frozen = frozenSelect(build);
    const mine = await frozen(d, { a: padId(a.id), b: padId(b.id), none: padId("1") });
    const theirs = await build(d).all({ a: padId(a.id), b: padId(b.id), none: padId("1") });
    expect(mine).toEqual(theirs);
    expect(mine.map((r) => r.user)).toEqual([null, null]);
    expect(mine[0]?.n).toBe(42);
    expect(mine[0]?.deep.id).toBe(a.id);
    // (Not in a batch: D1 gives a batch's rows as objects, where a join's same-named columns overwrite each other.)
  });
});
