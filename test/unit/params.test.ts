import { describe, expect, it } from "vitest";
import { nestPairs, parseJsonText, truthy } from "../../src/lib/http/params";
import { clampLimit, readPage } from "../../src/lib/http/pagination";

describe("Rails-style parameters", () => {
  it("nests brackets and arrays", () => {
    const p = nestPairs([
      ["media_ids[]", "1"],
      ["media_ids[]", "2"],
      ["fields_attributes[0][name]", "a"],
      ["fields_attributes[0][value]", "b"],
      ["home[last_read_id]", "9"],
      ["poll[options][]", "x"],
      ["poll[options][]", "y"],
    ]);
    expect(p).toEqual({
      media_ids: ["1", "2"],
      fields_attributes: { "0": { name: "a", value: "b" } },
      home: { last_read_id: "9" },
      poll: { options: ["x", "y"] },
    });
  });

  it("follows the spec's truthiness", () => {
    for (const f of ["f", "0", "false", "off", "", "FALSE"]) expect(truthy(f)).toBe(false);
    for (const t of ["1", "true", "t", "on", "yes"]) expect(truthy(t)).toBe(true);
    expect(truthy(undefined)).toBeUndefined();
  });

  it("refuses deeply nested JSON without recursing (A12)", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(() => parseJsonText(deep)).toThrow(/nested/);
  });
});

describe("pagination", () => {
  it("clamps limits and never fails (A6, A7)", () => {
    expect(clampLimit("100000", 20, 40)).toBe(40);
    expect(clampLimit("-5", 20, 40)).toBe(5);
    expect(clampLimit("abc", 20, 40)).toBe(20);
    expect(clampLimit(undefined, 20, 40)).toBe(20);
    expect(clampLimit("0", 20, 40)).toBe(20);
  });

  it("ignores malformed cursors (A9)", () => {
    expect(readPage({ max_id: "abc", since_id: "-1", min_id: "" }, 20, 40)).toEqual({ limit: 20 });
    expect(readPage({ max_id: "123" }, 20, 40)).toEqual({ limit: 20, maxId: "123" });
  });
});
