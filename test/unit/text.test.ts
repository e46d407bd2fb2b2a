import { describe, expect, it } from "vitest";
import { cleanText, extractEntities, normalizeLanguage, normalizeTag, renderPlainText, statusLength } from "../../src/lib/text/text";

const links = {
  mention: (e: { username: string }) => ({ url: `https://x.test/@${e.username}`, username: e.username }),
  tagUrl: (n: string) => `https://x.test/tags/${n}`,
};

describe("status text", () => {
  it("finds urls, mentions and hashtags", () => {
    const es = extractEntities("hi @alice and @bob@remote.example see https://example.com/a?b=1. #Tern!");
    expect(es.map((e) => e.kind)).toEqual(["mention", "mention", "url", "hashtag"]);
    expect(es[1]).toMatchObject({ username: "bob", domain: "remote.example" });
    expect(es[2]).toMatchObject({ url: "https://example.com/a?b=1" });
  });

  it("counts graphemes, URLs as 23 and remote mentions by username (A1, A2)", () => {
    expect(statusLength("👨‍👩‍👧‍👦".repeat(500))).toBe(500);
    expect(statusLength(`https://example.com/${"a".repeat(200)}`)).toBe(23);
    expect(statusLength("@bob@remote.example")).toBe(4);
    expect(statusLength("ab", "cd")).toBe(4);
  });

  it("escapes HTML and renders paragraphs", () => {
    const html = renderPlainText("<script>x</script>\n\nline1\nline2 @alice #Tag", links);
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain("<br />");
    expect(html).toContain('class="u-url mention"');
    expect(html).toContain('rel="tag"');
    expect(html.startsWith("<p>")).toBe(true);
  });

  it("normalises hashtags like Mastodon (A19)", () => {
    expect(normalizeTag("ａｂｃ")).toBe("abc");
    expect(normalizeTag("Café")).toBe("cafe");
  });

  it("strips NUL and lone surrogates (A14)", () => {
    expect(cleanText("a\u0000b\uD800c")).toBe("ab\uFFFDc");
  });

  it("scans hostile input in linear time (G4)", () => {
    for (const s of ["@".repeat(100_000), "#".repeat(100_000), `http://${"a".repeat(100_000)}`, "a@".repeat(50_000)]) {
      const t0 = Date.now();
      extractEntities(s);
      statusLength(s);
      expect(Date.now() - t0).toBeLessThan(2000);
    }
  });
});

describe("language tags", () => {
  it("keep their primary subtag, as statuses, cards and trends store them", () => {
    expect(["en", "EN", "en-GB", "pt_BR", " de ", "zh-Hant-TW", "sr-Latn-RS", "fil"].map(normalizeLanguage)).toEqual([
      "en",
      "en",
      "en",
      "pt",
      "de",
      "zh",
      "sr",
      "fil",
    ]);
    expect(["", null, undefined, "e", "english", "en-", "en GB", "x-klingon", "12", "en-GB;q=0.9"].map(normalizeLanguage)).toEqual(Array(10).fill(null));
  });
});
