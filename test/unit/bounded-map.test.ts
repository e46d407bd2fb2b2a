import { describe, expect, it } from "vitest";
import { setAtMost } from "../../src/lib/limits/bounded-map";

describe("setAtMost", () => {
  it("keeps at most max entries, the oldest leaving first; a key already there keeps its place", () => {
    const m = new Map<string, number>();
    for (const [k, v] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const)
      setAtMost(m, k, v, 3);
    setAtMost(m, "a", 10, 3);
    expect([...m]).toEqual([
      ["a", 10],
      ["b", 2],
      ["c", 3],
    ]);
    setAtMost(m, "d", 4, 3);
    expect([...m]).toEqual([
      ["b", 2],
      ["c", 3],
      ["d", 4],
    ]);
  });
});
