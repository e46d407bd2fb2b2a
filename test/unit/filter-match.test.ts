// Keyword matching as Mastodon does it (CustomFilterKeyword#to_regex): case-insensitive; whole-word keywords get a
// word boundary only on a side where they begin or end with a (Unicode) word character.
import { describe, expect, it } from "vitest";
import { renderFilterBase } from "../../src/entities/statuses/filter";
import { compileFilters, htmlToPlain, keywordsRegExp, matchFilters, searchableText, type FilterRuleRow } from "../../src/policy/filter-match";

const match = (keyword: string, wholeWord: boolean, text: string) => keywordsRegExp([{ keyword, wholeWord }])?.exec(text)?.[0] ?? null;

describe("keyword matching", () => {
  it("matches substrings case-insensitively unless whole_word", () => {
    expect(match("cat", false, "Concatenate")).toBe("cat");
    expect(match("cat", false, "I like CATS")).toBe("CAT");
    expect(match("cat", true, "Concatenate")).toBeNull();
    expect(match("cat", true, "cats")).toBeNull();
    expect(match("cat", true, "my Cat!")).toBe("Cat");
    expect(match("cat", true, "cat")).toBe("cat");
    expect(match("cat", true, "(cat)")).toBe("cat");
    expect(match("cat", true, "cat_food")).toBeNull(); // _ is a word character
    expect(match("two words", true, "say two words now")).toBe("two words");
    expect(match("two words", true, "two wordsmiths")).toBeNull();
  });

  it("treats Unicode letters as word characters", () => {
    expect(match("café", true, "Un CAFÉ noir")).toBe("CAFÉ");
    expect(match("café", true, "cafés")).toBeNull();
    expect(match("caf", true, "café")).toBeNull(); // é continues the word
    expect(match("naïve", true, "so naïve.")).toBe("naïve");
    expect(match("猫", true, "猫が好き")).toBeNull(); // が is a letter: no boundary
    expect(match("猫", false, "猫が好き")).toBe("猫");
    expect(match("猫", true, "猫。")).toBe("猫");
    expect(match("Ωmega", true, "ωmega!")).toBe("ωmega");
  });

  it("puts a boundary only on a side that begins or ends with a word character", () => {
    expect(match("#tag", true, "see #tag.")).toBe("#tag");
    expect(match("#tag", true, "x#tag")).toBe("#tag"); // no boundary before '#'
    expect(match("#tag", true, "#tags")).toBeNull();
    expect(match("c++", true, "I like C++!")).toBe("C++");
    expect(match("c++", true, "abc++")).toBeNull();
    expect(match("c++", true, "c+++")).toBe("c++"); // no boundary after '+'
    expect(match(":)", true, "ok:)ok")).toBe(":)");
    expect(match("@twitter.com", false, "me@twitter.com")).toBe("@twitter.com");
    expect(match("https://t.co/", false, "see https://t.co/abc")).toBe("https://t.co/");
  });

  it("escapes regular-expression syntax in keywords", () => {
    expect(match("a.b", false, "axb")).toBeNull();
    expect(match("a.b", false, "a.b")).toBe("a.b");
    expect(match("(x|y)*", false, "(x|y)*")).toBe("(x|y)*");
    expect(match("[a-z]{2}", true, "[a-z]{2}")).toBe("[a-z]{2}");
    expect(match("\\d/", false, "\\d/")).toBe("\\d/");
    expect(match("-", false, "a-b")).toBe("-");
  });

  it("reports the leftmost match of all the filter's keywords", () => {
    const re = keywordsRegExp([
      { keyword: "zebra", wholeWord: true },
      { keyword: "ant", wholeWord: false },
    ])!;
    expect(re.exec("the zebra ate an elephant")?.[0]).toBe("zebra");
    expect(re.exec("an elephant and a zebra")?.[0]).toBe("ant");
    expect(keywordsRegExp([])).toBeNull();
  });
});

describe("searchable text", () => {
  it("is the content warning, plain content, poll options and media descriptions", () => {
    const t = searchableText(
      {
        local: false,
        text: "",
        content: '<p>Hello &amp; <a href="x"><span class="invisible">https://</span>example.com</a><br>line</p><p>two</p>',
        spoilerText: "CW",
      },
      ["a cat photo", null],
      ["yes", "no"],
    );
    expect(t).toBe("CW\n\nHello & https://example.com\nline\n\ntwo\n\nyes\n\nno\n\na cat photo\n\n");
    expect(searchableText({ local: true, text: "source *text*", content: "<p>source <em>text</em></p>", spoilerText: "" }, [], null)).toBe(
      "\n\nsource *text*\n\n",
    );
    expect(htmlToPlain("<p>a &lt;b&gt; &#x1F600; &#128512; &nbsp;</p>")).toBe("a <b> 😀 😀 \u00a0");
  });
});

describe("compiled filters", () => {
  const row = (filter: string, kind: number, rule: string, o: Partial<FilterRuleRow> = {}): FilterRuleRow => ({
    filter_id: filter.padStart(20, "0"),
    filter_title: `f${filter}`,
    filter_context: JSON.stringify(["home"]),
    filter_action: "warn",
    filter_expires_at: null,
    kind,
    rule_id: rule.padStart(20, "0"),
    keyword: null,
    whole_word: null,
    rule_status_id: null,
    ...o,
  });

  it("group rule rows by filter and match by keyword, status id and context", () => {
    const filters = compileFilters([
      row("1", 0, "10", { keyword: "spoiler", whole_word: 1 }),
      row("1", 1, "11", { rule_status_id: "00000000000000000099" }),
      row("2", 0, "12", { keyword: "news", whole_word: 0, filter_context: JSON.stringify(["public", "thread"]), filter_action: "hide" }),
    ]);
    expect(filters.map((f) => [f.id, f.statusIds.size, renderFilterBase(f)])).toEqual([
      ["1", 1, { id: "1", title: "f1", context: ["home"], expires_at: null, filter_action: "warn" }],
      ["2", 0, { id: "2", title: "f2", context: ["public", "thread"], expires_at: null, filter_action: "hide" }],
    ]);
    const text = () => "Big SPOILERS and newsletters";
    expect(matchFilters(filters, text, ["5"]).map((m) => [m.filter.id, m.keywordMatches, m.statusMatches])).toEqual([["2", ["news"], null]]);
    expect(matchFilters(filters, () => "a spoiler", ["5", "99"]).map((m) => [m.filter.id, m.keywordMatches, m.statusMatches])).toEqual([
      ["1", ["spoiler"], ["99"]],
    ]);
    expect(matchFilters(filters, text, ["99"], "public").map((m) => m.filter.id)).toEqual(["2"]);
    expect(matchFilters(filters, text, ["99"], "home").map((m) => m.filter.id)).toEqual(["1"]);
    let asked = 0;
    matchFilters(compileFilters([row("3", 1, "13", { rule_status_id: "7" })]), () => String(++asked), ["7"]);
    expect(asked).toBe(0); // no keyword: the text is never built
  });
});
