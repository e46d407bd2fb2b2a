import { sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { bindText, boundSql, boundText } from "../../src/db/bound-sql";

const dialect = new SQLiteSyncDialect();
const built = (q: ReturnType<typeof boundSql>) => dialect.sqlToQuery(q);

describe("bound SQL text", () => {
  it("binds every $name as a parameter, in order, a name used twice bound twice", () => {
    const q = built(boundSql("SELECT x FROM t WHERE a = $a AND b = $b OR a2 = $a", { a: 1, b: "it's" }));
    expect(q.sql).toBe("SELECT x FROM t WHERE a = ? AND b = ? OR a2 = ?");
    expect(q.params).toEqual([1, "it's", 1]);
  });

  it("parses once and binds many times, each call with its own values", () => {
    const t = boundText("SELECT $v AS v, $now AS now FROM t");
    expect(t.names).toEqual(["v", "now"]);
    const one = built(bindText(t, { v: "1", now: 10 }));
    const two = built(bindText(t, { v: "2", now: 20 }));
    expect(one).toMatchObject({ sql: "SELECT ? AS v, ? AS now FROM t", params: ["1", 10] });
    expect(two).toMatchObject({ sql: "SELECT ? AS v, ? AS now FROM t", params: ["2", 20] });
  });

  it("keeps text without placeholders as it is, and joins into a larger statement", () => {
    const head = bindText(boundText("SELECT 1 FROM t"), {});
    expect(built(sql`${head} WHERE id IN (${"a"}, ${"b"})`)).toMatchObject({ sql: "SELECT 1 FROM t WHERE id IN (?, ?)", params: ["a", "b"] });
  });

  it("refuses a placeholder without a value rather than sending the text", () => {
    expect(() => boundSql("SELECT $missing", {})).toThrow(/no value for \$missing/);
    expect(() => bindText(boundText("SELECT $v"), { w: 1 })).toThrow(/no value for \$v/);
  });
});
