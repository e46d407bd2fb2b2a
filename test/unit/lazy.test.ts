// lazy() (src/lib/limits/lazy.ts): built on the first call, once, whatever the value (null included: the grapheme segmenter
// is null where Intl.Segmenter is missing, and must not be looked for again on every count).
import { describe, expect, it } from "vitest";
import { lazy } from "../../src/lib/limits/lazy";

describe("lazy", () => {
  it("builds on the first call and only once, also when the value is null or undefined", () => {
    for (const value of [{ a: 1 }, null, undefined, 0]) {
      let builds = 0;
      const get = lazy(() => {
        builds++;
        return value;
      });
      expect(builds).toBe(0);
      expect(get()).toBe(value);
      expect(get()).toBe(value);
      expect(builds).toBe(1);
    }
  });
});
