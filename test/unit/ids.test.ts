import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { statuses } from "../../src/db/schema";
import { padId, parseId, snowflake, snowflakeTime, unpadId } from "../../src/lib/text/ids";
import { asc, eq, lt } from "drizzle-orm";

describe("snowflake ids", () => {
  it("puts milliseconds in the top 48 bits and a sequence in the low 16", () => {
    const at = Date.UTC(2026, 10, 22, 3, 0, 0, 123);
    const id = snowflake(at);
    expect(BigInt(id) >> 16n).toBe(BigInt(at));
    expect(snowflakeTime(id).getTime()).toBe(at);
    expect(BigInt(id)).toBeGreaterThan(2n ** 53n);
  });

  it("makes distinct, increasing ids within one millisecond", () => {
    const at = Date.now();
    const ids = Array.from({ length: 50 }, () => snowflake(at));
    expect(new Set(ids).size).toBe(50);
  });

  it("keeps each millisecond's sequence when ids of now and of other times alternate (an import's dated rows)", () => {
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3000; i++) ids.push(snowflake(now), snowflake(now - 60_000 + (i % 50)));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("accepts only decimal int64 strings", () => {
    expect(parseId("113456789012345678")).toBe("113456789012345678");
    expect(parseId("9223372036854775807")).toBe("9223372036854775807");
    for (const bad of ["abc", "1e3", "0x10", "-1", "", " 1", "99999999999999999999999", "9223372036854775808", "1.5"]) {
      expect(parseId(bad)).toBeNull();
    }
  });

  it("pads so that text order is numeric order", () => {
    const old = snowflake(Date.UTC(2016, 0, 1)); // a pre-2018 time: a shorter decimal
    const now = snowflake(Date.UTC(2026, 0, 1));
    expect(old.length).toBeLessThan(now.length + 1);
    expect(padId(old) < padId(now)).toBe(true);
    expect(unpadId(padId("42"))).toBe("42");
  });
});

describe("ids through D1", () => {
  it("round-trip exactly above 2^53 and sort with pre-2018 ids", async () => {
    const db = createDb(env.DB);
    const big = "113456789012345678";
    const max = "9223372036854775807";
    const old = "6254194081792"; // 2016-ish snowflake with few digits
    const base = { uri: "", accountId: "1", local: true, visibility: "public" as const, createdAt: 0, updatedAt: 0 };
    await db.insert(statuses).values([
      { ...base, id: big, uri: "a" },
      { ...base, id: max, uri: "b" },
      { ...base, id: old, uri: "c" },
    ]);
    const rows = await db.select({ id: statuses.id }).from(statuses).orderBy(asc(statuses.id));
    expect(rows.map((r) => r.id)).toEqual([old, big, max]);
    const one = await db.select({ id: statuses.id }).from(statuses).where(eq(statuses.id, big));
    expect(one[0].id).toBe(big);
    const below = await db.select({ id: statuses.id }).from(statuses).where(lt(statuses.id, big));
    expect(below.map((r) => r.id)).toEqual([old]);
  });
});
