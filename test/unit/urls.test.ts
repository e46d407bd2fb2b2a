// httpUrl: the one gate for URLs taken from remote documents (security E10 in docs/security-coverage.md).
import { describe, expect, it } from "vitest";
import { httpUrl } from "../../src/lib/http/urls";

describe("httpUrl", () => {
  it("keeps absolute http(s) URLs as they were written", () => {
    for (const u of ["https://a.example/@bob", "http://a.example:8080/x?y=1&z=2#f", "HTTPS://A.EXAMPLE/", "https://bücher.example/ü"]) {
      expect(httpUrl(u)).toBe(u);
    }
  });

  it("drops other schemes, relative and unparsable URLs, whitespace, controls and userinfo", () => {
    const bad = [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "vbscript:x",
      "ftp://a.example/",
      "//a.example/x",
      "/relative",
      "https:a.example",
      "https://",
      "https://[::1",
      " https://a.example/",
      "https://a.example/ x",
      "https://a.example/\tx",
      "java\tscript:alert(1)",
      "https://a.example/\u0000",
      "https://a.example/\u2028",
      "https://user:pw@a.example/",
      "https://a.example@b.example/",
      `https://a.example/${"x".repeat(2100)}`,
      "",
    ];
    for (const u of bad) expect(httpUrl(u), JSON.stringify(u)).toBeNull();
    for (const v of [null, undefined, 42, {}, ["https://a.example/"]]) expect(httpUrl(v)).toBeNull();
  });
});
