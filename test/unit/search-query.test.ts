import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/lib/http/errors";
import { ftsMatch, MAX_CLAUSES, parseSearchQuery } from "../../src/lib/text/search-query";

const DAY = 86_400_000;

describe("parseSearchQuery", () => {
  it("splits words, phrases, exclusions and hashtags", () => {
    const p = parseSearchQuery(`cats "black dog" -mice +birds #Caturday -#Mondays`);
    expect(p.text).toEqual([
      { text: "cats", negated: false },
      { text: "black dog", negated: false },
      { text: "mice", negated: true },
      { text: "birds", negated: false },
    ]);
    expect(p.tags).toEqual([
      { value: "caturday", negated: false },
      { value: "mondays", negated: true },
    ]);
    expect(p.scope).toBe("all");
  });

  it("reads every operator", () => {
    const p = parseSearchQuery("from:me from:@alice@remote.example -from:bob has:MEDIA -is:reply language:pt-BR in:library during:2024-02-29");
    expect(p.from).toEqual([
      { value: "me", negated: false },
      { value: "alice@remote.example", negated: false },
      { value: "bob", negated: true },
    ]);
    expect(p.has).toEqual([{ value: "media", negated: false }]);
    expect(p.is).toEqual([{ value: "reply", negated: true }]);
    expect(p.languages).toEqual([{ value: "pt", negated: false }]);
    expect(p.scope).toBe("library");
    const day = Date.UTC(2024, 1, 29);
    expect(p.dates).toEqual([{ lo: day, hi: day + DAY, negated: false }]);
    expect(p.text).toEqual([]);
  });

  it("reads before/after as whole UTC days and epoch milliseconds, and refuses other dates with a 422", () => {
    const d = Date.UTC(2023, 0, 1);
    expect(parseSearchQuery("before:2023-01-01").dates).toEqual([{ lo: null, hi: d, negated: false }]);
    expect(parseSearchQuery("after:2023-01-01").dates).toEqual([{ lo: d + DAY, hi: null, negated: false }]);
    expect(parseSearchQuery("before:1700000000000").dates).toEqual([{ lo: null, hi: 1700000000000, negated: false }]);
    expect(parseSearchQuery(`after:"1700000000000"`).dates).toEqual([{ lo: 1700000000001, hi: null, negated: false }]);
    expect(parseSearchQuery("during:0001-01-01").dates[0]!.lo).toBe(-62135596800000);
    for (const bad of ["before:2023-02-30", "after:yesterday", "during:2023-1-1", "before:"]) {
      let err: unknown;
      try {
        parseSearchQuery(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(422);
    }
  });

  it("keeps unknown prefixes as words, ignores lone quotes and words without letters or digits", () => {
    const p = parseSearchQuery(`text:foo "unclosed * ^ ( NEAR( -`);
    expect(p.text).toEqual([
      { text: "text:foo", negated: false },
      { text: "unclosed", negated: false },
      { text: "NEAR(", negated: false },
    ]);
    expect(parseSearchQuery(`"a phrase" "`).text).toEqual([{ text: "a phrase", negated: false }]);
    expect(parseSearchQuery("from:not/a/handle").from).toEqual([{ value: null, negated: false }]);
    expect(parseSearchQuery("in:everywhere").scope).toBe("all");
  });

  it("caps the number of clauses and the length of a word", () => {
    const p = parseSearchQuery(Array.from({ length: 100 }, (_, i) => `w${i}`).join(" "));
    expect(p.text).toHaveLength(MAX_CLAUSES);
    expect(parseSearchQuery("x".repeat(5000)).text[0]!.text).toHaveLength(200);
  });
});

describe("ftsMatch", () => {
  it("quotes every word and phrase and writes the operators itself", () => {
    expect(ftsMatch(parseSearchQuery(`cats "black dog"`).text)).toEqual({ match: `"cats" AND "black dog"`, exclude: null });
    expect(ftsMatch(parseSearchQuery(`cats -mice -rats`).text)).toEqual({ match: `("cats") NOT ("mice" OR "rats")`, exclude: null });
    expect(ftsMatch(parseSearchQuery(`-mice`).text)).toEqual({ match: null, exclude: `"mice"` });
    expect(ftsMatch(parseSearchQuery(`OR AND NOT col:x`).text).match).toBe(`"OR" AND "AND" AND "NOT" AND "col:x"`);
    expect(ftsMatch([{ text: `a"b`, negated: false }]).match).toBe(`"a""b"`);
    expect(ftsMatch([])).toEqual({ match: null, exclude: null });
  });
});
