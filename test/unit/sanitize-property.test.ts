// Property test of the remote-HTML sanitiser (security E1–E3, the "safe by construction" requirement): a spec-compliant
// HTML5 parser (parse5) reads the sanitiser's output for generated hostile inputs — raw-text and RCDATA elements,
// SVG/MathML, comments, CDATA, processing instructions, broken and nested tags, character references, every kind of
// attribute quoting, javascript:/data:/entity-encoded schemes — and finds only Mastodon's allowlisted elements,
// attributes and link schemes, no comments, and a tree that parses back to itself after serialisation.
import fc from "fast-check";
import { defaultTreeAdapter, html as h, parseFragment, serialize, type DefaultTreeAdapterMap } from "parse5";
import { describe, expect, it } from "vitest";
import { plainText, sanitizeHtml } from "../../src/federation/remote/sanitize";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

// Mastodon's MASTODON_STRICT (lib/sanitize_ext/sanitize_config.rb) plus the attributes it adds to links.
const ELEMENTS = new Set([
  "p",
  "br",
  "span",
  "a",
  "del",
  "s",
  "pre",
  "blockquote",
  "code",
  "b",
  "strong",
  "u",
  "i",
  "em",
  "ul",
  "ol",
  "li",
  "ruby",
  "rt",
  "rp",
]);
const ATTRIBUTES: Record<string, Set<string>> = {
  a: new Set(["href", "rel", "class", "translate", "target"]),
  span: new Set(["class", "translate"]),
  ol: new Set(["start", "reversed"]),
  li: new Set(["value"]),
  p: new Set(["class"]),
};
const PROTOCOLS = new Set(["http:", "https:", "dat:", "dweb:", "ipfs:", "ipns:", "ssb:", "gopher:", "xmpp:", "magnet:", "gemini:"]);
const CLASS = /^(?:(?:h|p|u|dt|e)-\S+|mention|hashtag|ellipsis|invisible|quote-inline)$/;

const context = defaultTreeAdapter.createElement("div", h.NS.HTML, []);
const parse = (s: string) => parseFragment(context, s, {});

/** Every problem found in the parsed output (empty when it is safe). */
function problems(root: ParentNode): string[] {
  const out: string[] = [];
  const stack: Node[] = [...root.childNodes];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.nodeName === "#text") continue;
    if (node.nodeName === "#comment" || node.nodeName === "#documentType") {
      out.push(`${node.nodeName} node`);
      continue;
    }
    const el = node as Element;
    if (el.namespaceURI !== h.NS.HTML) out.push(`foreign element ${el.tagName}`);
    if (!ELEMENTS.has(el.tagName)) out.push(`element ${el.tagName}`);
    for (const attr of el.attrs) {
      const name = attr.name;
      if (/^on/i.test(name)) out.push(`event handler ${name}`);
      if (name !== "lang" && !ATTRIBUTES[el.tagName]?.has(name)) out.push(`attribute ${el.tagName}[${name}]`);
      if (name === "href") {
        let protocol = "";
        try {
          protocol = new URL(attr.value).protocol;
        } catch {
          out.push(`unparsable href ${JSON.stringify(attr.value)}`);
        }
        if (protocol && !PROTOCOLS.has(protocol)) out.push(`href scheme ${protocol}`);
        if (/^\s|[\u0000-\u001f]/.test(attr.value)) out.push(`href with whitespace or controls ${JSON.stringify(attr.value)}`);
      }
      if (name === "rel" && attr.value !== "nofollow noopener noreferrer") out.push(`rel ${attr.value}`);
      if (name === "target" && attr.value !== "_blank") out.push(`target ${attr.value}`);
      if (name === "translate" && attr.value !== "no") out.push(`translate ${attr.value}`);
      if (name === "class" && !attr.value.split(" ").every((c) => CLASS.test(c))) out.push(`class ${attr.value}`);
      if ((name === "start" || name === "value") && !/^-?\d+$/.test(attr.value)) out.push(`${name} ${attr.value}`);
    }
    if (el.tagName === "template") stack.push(...(el as DefaultTreeAdapterMap["template"]).content.childNodes);
    stack.push(...el.childNodes);
  }
  return out;
}

/** A canonical dump of a tree, to compare two parses. */
function dump(node: ParentNode): unknown {
  return node.childNodes.map((c: Node): unknown => {
    if (c.nodeName === "#text") return (c as DefaultTreeAdapterMap["textNode"]).value;
    if (c.nodeName === "#comment") return { comment: (c as DefaultTreeAdapterMap["commentNode"]).data };
    const el = c as Element;
    return { tag: el.tagName, ns: el.namespaceURI, attrs: el.attrs.map((a) => [a.name, a.value]), children: dump(el) };
  });
}

/** The failures for one input: unsafe output, or output whose parse is not stable. */
async function check(input: string): Promise<string[]> {
  const out = await sanitizeHtml(input);
  const first = parse(out);
  const found = problems(first);
  const again = parse(serialize(first));
  if (JSON.stringify(dump(again)) !== JSON.stringify(dump(first))) found.push("re-parse changed the tree");
  return found;
}

// ---------- the generator ----------

const OTHER_TAGS = [
  "h1",
  "h4",
  "div",
  "table",
  "tr",
  "td",
  "caption",
  "img",
  "image",
  "input",
  "hr",
  "wbr",
  "font",
  "form",
  "button",
  "select",
  "option",
  "object",
  "embed",
  "body",
  "html",
  "head",
  "frameset",
  "listing",
  "dd",
  "dt",
  "center",
  "section",
  "big",
  "nobr",
  // case variants
  "A",
  "ScRiPt",
  "sVg",
  "TEXTAREA",
  "P",
  "LI",
];
// Raw text, RCDATA, PLAINTEXT and template (their contents must never become markup), and foreign content.
const SPECIAL_TAGS = [
  "script",
  "style",
  "xmp",
  "iframe",
  "noembed",
  "noframes",
  "noscript",
  "textarea",
  "title",
  "plaintext",
  "template",
  "svg",
  "math",
  "foreignObject",
  "desc",
  "mi",
  "mo",
  "mtext",
  "mglyph",
  "malignmark",
  "annotation",
  "annotation-xml",
  "semantics",
  "g",
  "use",
];
const tagName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ELEMENTS) },
  { weight: 2, arbitrary: fc.constantFrom(...OTHER_TAGS) },
  { weight: 1, arbitrary: fc.constantFrom(...SPECIAL_TAGS) },
);
const attrName = fc.constantFrom(
  "href",
  "HREF",
  "class",
  "rel",
  "target",
  "translate",
  "lang",
  "start",
  "reversed",
  "value",
  "style",
  "src",
  "srcdoc",
  "encoding",
  "display",
  "color",
  "xlink:href",
  "formaction",
  "onerror",
  "ONCLICK",
  "onload",
  "on",
  "=",
  '"',
  "'",
  "<x",
  "data-x",
);
const scheme = fc.constantFrom(
  "https://x.example/p?a=1&b=2&amp;c=3",
  "http://y.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "java\tscript:alert(1)",
  "java&Tab;script:alert(1)",
  "jav&#x61;script:alert(1)",
  "&#106;avascript:alert(1)",
  "&#x6A&#x61vascript:alert(1)",
  "javascript&colon;alert(1)",
  "javascript&#58;alert(1)",
  "javascript&#x3a;alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data:image/svg+xml;base64,PHN2Zz4=",
  "vbscript:msgbox(1)",
  " https://lead.example",
  "\u0000javascript:x",
  "https:",
  "//proto.example",
  "/relative",
  "magnet:?xt=urn:btih:abc",
  "gemini://g.example",
  "ftp://f.example",
  'https://x/"><img src=x onerror=alert(1)>',
  "&#x68;ttps://ok.example",
  "https&#58;//x.example",
  "https://x.example/&quot;onmouseover=&quot;alert(1)",
);
const value = fc.oneof(
  scheme,
  fc.constantFrom(
    "u-url mention evil",
    "h-card",
    "invisible",
    "ellipsis",
    "hashtag",
    "no",
    "yes",
    "3",
    "-1",
    "1e3",
    "en",
    "en-US",
    'x"y',
    "block",
    "application/x-tex",
    "text/plain",
    "text/html",
    "alert(1)",
    "",
    "`",
  ),
  fc.string({ maxLength: 6 }),
);
const quoted = fc
  .tuple(value, fc.constantFrom('"', "'", "", "`", "unterminated"))
  .map(([v, q]) => (q === "unterminated" ? `"${v}` : q === "" ? v.replace(/[\s>]/g, "") : `${q}${v}${q}`));
const attribute = fc.tuple(attrName, fc.option(quoted), fc.constantFrom(" ", "", "\n", "/")).map(([n, v, sep]) => `${sep}${n}${v === null ? "" : `=${v}`}`);
const startTag = fc
  .tuple(tagName, fc.array(attribute, { maxLength: 3 }), fc.constantFrom("", "/", " /", " ", "\t"))
  .map(([n, as, end]) => `<${n}${as.map((a) => ` ${a}`).join("")}${end}>`);
const endTag = fc.tuple(tagName, fc.constantFrom("", " x=1", " /", "/")).map(([n, tail]) => `</${n}${tail}>`);
const text = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.string({ unit: "binary", maxLength: 4 }),
  fc.constantFrom(
    "hello",
    "a < b",
    "x > y",
    "&amp;",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&notit;",
    "&#0;",
    "&#13;",
    "&#x0d;",
    "&#10;",
    "&#x80;",
    "&#xD800;",
    "&#x110000;",
    "&#99999999999;",
    "&copy",
    "&ampx",
    "&NewLine;",
    "&Tab;",
    "&nbsp;",
    "&unknown;",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\u0000",
    "\uD800",
    "\uDC00",
    "\uFEFF",
    "\u00a0",
    "\"'`",
    "]]>",
    "-->",
    "--!>",
    "<",
    "</",
    "<!",
    "<?",
    "&",
    "&#",
    "&#x",
    "\f",
    "\u2028",
  ),
);
const markup = fc.constantFrom(
  "<!-- c -->",
  "<!-->",
  "<!--->",
  "<!---->",
  "<!-- a --!>",
  "<!-- a --!",
  "<!-- unterminated",
  "<!--<script>-->",
  "<![CDATA[ <img src=x onerror=alert(1)> ]]>",
  "<![CDATA[",
  "<?xml x?>",
  "<?php echo 1 ?>",
  "<!DOCTYPE html>",
  '<!DOCTYPE x PUBLIC "a>b">',
  "<!x>",
  "</>",
  "</ x>",
  "</3>",
  "<a",
  '<a href="',
  "<img src=x onerror=alert(1)",
  "<p/>",
  "<br/>",
  "</br>",
  "</p>",
  "<3",
  "< p>",
  "<svg><![CDATA[</svg><img src=x onerror=alert(1)>]]></svg>",
  "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
  "<svg><p><style><img src=x onerror=alert(1)></style>",
  '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
  "<select><template><style><!--</style><a rel=--><img src=x onerror=alert(1)>",
  '<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x &lt; y</annotation></semantics></math>',
  "<script><!--<script></script><img src=x onerror=alert(1)></script>",
  "<textarea></textarea ><img src=x onerror=alert(1)>",
  '<title><a href="</title><img src=x onerror=alert(1)>">',
  '<a href="https://ok.example"><a href="https://nested.example">n</a></a>',
  "<pre>\n\nlead</pre>",
  "<pre>&#10;&#10;x</pre>",
  "<pre>&NewLine;x</pre>",
  "<ruby>a<rt>b<rt>c</ruby>",
  "<ul><li>a<li>b<p>c<li>d</ul>",
  "<p><b><ul><li>x</b></ul>",
  "<b><i><u><s><em><strong><code><del>deep",
);
const link = fc
  .tuple(
    quoted,
    fc.option(fc.constantFrom("u-url mention", "mention hashtag evil", "invisible")),
    fc.option(fc.constantFrom("onclick=alert(1)", "rel=me", "target=_self")),
  )
  .map(([href, cls, extra]) => `<a href=${href}${cls === null ? "" : ` class="${cls}"`}${extra === null ? "" : ` ${extra}`}>`);
const nameOf = (tag: string) => /^<([^\s/>]+)/.exec(tag)?.[1] ?? "x";
// Flat token soup (broken nesting, stray end tags) mixed with properly nested subtrees.
const { node } = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    { weight: 5, arbitrary: text },
    { weight: 3, arbitrary: startTag },
    { weight: 2, arbitrary: endTag },
    { weight: 2, arbitrary: markup },
    { weight: 2, arbitrary: link },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.oneof(startTag, link), fc.array(tie("node"), { maxLength: 4 }), fc.boolean())
        .map(([open, kids, close]) => open + kids.join("") + (close ? `</${nameOf(open)}>` : "")),
    },
  ),
}));
const document = fc.array(node, { maxLength: 12 }).map((ts) => ts.join(""));

const RUNS = 6_000;

describe("sanitiser output under an HTML5 parser (parse5), generated inputs", () => {
  it.each([
    ["a fixed seed", 20260714],
    ["a random seed", Math.floor(Math.random() * 2 ** 31)],
  ])(`${RUNS} inputs from %s (%i): only allowlisted markup, stable when re-parsed`, async (_label, seed) => {
    await fc.assert(
      fc.asyncProperty(document, async (input) => {
        const found = await check(input);
        if (found.length) throw new Error(`${found.join("; ")}\n  input:  ${JSON.stringify(input)}\n  output: ${JSON.stringify(await sanitizeHtml(input))}`);
      }),
      { seed, numRuns: RUNS },
    );
  });

  it("sanitising its own output changes nothing (idempotent)", async () => {
    await fc.assert(
      fc.asyncProperty(document, async (input) => {
        const once = await sanitizeHtml(input);
        expect(await sanitizeHtml(once)).toBe(once);
      }),
      { seed: 7, numRuns: 2_000 },
    );
  });

  it("plain text keeps no markup a parser would read as an element", async () => {
    await fc.assert(
      fc.asyncProperty(document, async (input) => {
        const text = await plainText(input);
        const tree = parse(text);
        expect(tree.childNodes.every((c) => c.nodeName === "#text")).toBe(true);
      }),
      { seed: 11, numRuns: 2_000 },
    );
  });

  it("known mutation-XSS shapes come out inert", async () => {
    const vectors = [
      '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
      '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
      "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
      "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
      "<textarea><img src=x onerror=alert(1)></textarea>",
      "<title><img src=x onerror=alert(1)></title>",
      "<xmp><img src=x onerror=alert(1)></xmp>",
      "<iframe><img src=x onerror=alert(1)></iframe>",
      "<noembed><img src=x onerror=alert(1)></noembed>",
      "<noframes><img src=x onerror=alert(1)></noframes>",
      "<plaintext><img src=x onerror=alert(1)>",
      "<<img src=x onerror=alert(1)>img src=x onerror=alert(1)>",
    ];
    for (const v of vectors) {
      expect(await check(v)).toEqual([]);
      expect(await sanitizeHtml(v)).not.toMatch(/<img/i);
    }
  });
});

/** Two HTML strings parse to the same tree (attribute order aside). */
function sameTree(a: string, b: string): boolean {
  const norm = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(norm)
      : x && typeof x === "object"
        ? { ...(x as object), attrs: [...((x as any).attrs as string[][])].sort(), children: norm((x as any).children) }
        : x;
  return JSON.stringify(norm(dump(parse(a)))) === JSON.stringify(norm(dump(parse(b))));
}

describe("Mastodon's MASTODON_STRICT examples (spec/lib/sanitize/config_spec.rb)", () => {
  it.each([
    ["<h1>Foo</h1>", "<p><strong>Foo</strong></p>"],
    ["<p>Check out:</p><ul><li>Foo</li><li>Bar</li></ul>", "<p>Check out:</p><ul><li>Foo</li><li>Bar</li></ul>"],
    ['<p>Check out:</p><ol start="3" reversed=""><li>Foo</li><li>Bar</li></ol>', '<p>Check out:</p><ol start="3" reversed=""><li>Foo</li><li>Bar</li></ol>'],
    ["<p><ruby>明日 <rp>(</rp><rt>Ashita</rt><rp>)</rp></ruby></p>", "<p><ruby>明日 <rp>(</rp><rt>Ashita</rt><rp>)</rp></ruby></p>"],
    ["<a>Test</a>", "Test"],
    ['<a><span class="invisible">foo&amp;</span><span>Test</span></a>', "foo&amp;Test"],
    ['<a href="foo://bar">Test</a>', "Test"],
    ['<a href="foo://bar">Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;</a>', 'Test&lt;a href="https://example.com"&gt;test&lt;/a&gt;'],
    ['<a href="http://example.com">Test</a>', '<a href="http://example.com" rel="nofollow noopener noreferrer" target="_blank">Test</a>'],
    [
      '<a href="http://example.com" translate="no">Test</a>',
      '<a href="http://example.com" translate="no" rel="nofollow noopener noreferrer" target="_blank">Test</a>',
    ],
    ['<a href="http://example.com" translate="foo">Test</a>', '<a href="http://example.com" rel="nofollow noopener noreferrer" target="_blank">Test</a>'],
    ['<a href=" https://google.fr">Test</a>', "Test"],
    ['<a href="dweb:/a/foo">Test</a>', '<a href="dweb:/a/foo" rel="nofollow noopener noreferrer" target="_blank">Test</a>'],
    [
      '<math><semantics><mrow><msup><mi>x</mi><mi>n</mi></msup><mo>+</mo><mi>y</mi></mrow><annotation encoding="application/x-tex">x^n+y</annotation></semantics></math>',
      "$x^n+y$",
    ],
    [
      '<math display="block"><semantics><mrow><msup><mi>x</mi><mi>n</mi></msup><mo>+</mo><mi>y</mi></mrow><annotation encoding="application/x-tex">x^n+y</annotation></semantics></math>',
      "$$x^n+y$$",
    ],
    ['<math><semantics><msqrt><mi>x</mi></msqrt><annotation encoding="text/plain">sqrt(x)</annotation></semantics></math>', "sqrt(x)"],
    [
      '<math><semantics><msqrt><mi>x</mi></msqrt><annotation encoding="text/plain">sqrt(x)</annotation><annotation encoding="application/x-tex">\\sqrt x</annotation></semantics></math>',
      "$\\sqrt x$",
    ],
  ])("%s", async (input, expected) => {
    const out = await sanitizeHtml(input);
    expect(sameTree(out, expected), `${out} vs ${expected}`).toBe(true);
  });
});

describe("edge cases an HTML5 parser reads differently from a naive one", () => {
  it.each([
    // raw text and RCDATA: contents are never markup
    ["<xmp><b>x</b></xmp>after", "after"],
    ["<textarea><b>x</b></textarea>", "&lt;b&gt;x&lt;/b&gt;"],
    ["<title>a &amp; b</title>", "a &amp; b"],
    ["<plaintext></plaintext><b>x</b>", ""],
    ["<script>a</script >b</script>c", "bc"],
    // comments end where a parser ends them
    ["a<!-->b", "ab"],
    ["a<!--->b", "ab"],
    ["a<!-- x --!>b", "ab"],
    ["a<!-- <b>x</b> -->b", "ab"],
    ["a<?php <b>x</b> ?>b", "ax ?&gt;b"],
    ["a</ x>b", "ab"],
    ["a</>b", "ab"],
    // CDATA only exists in foreign content; elsewhere it is a bogus comment up to the first ">"
    ["<![CDATA[<b>x</b>]]>", "x]]&gt;"],
    // foreign content is dropped; an HTML start tag inside it breaks out as in a browser
    ["<svg><b>x</b></svg>", "<b>x</b>"],
    ["<svg><foreignObject><b>x</b></foreignObject></svg>y", "y"],
    // structure the parser would change is written the way it reads
    ["<p>a<ul><li>b</ul>", "<p>a</p><ul><li>b</li></ul>"],
    ["<li>orphan</li>", "orphan"],
    [
      '<a href="https://a.example">1<a href="https://b.example">2</a>3</a>',
      '<a href="https://a.example" rel="nofollow noopener noreferrer" target="_blank">123</a>',
    ],
    ["<pre>\n\ncode</pre>", "<pre>code</pre>"],
    // references: decoded where it matters, never turned into markup
    ["&lt;b&gt; &amp;amp; &#60;i&#62;", "&lt;b&gt; &amp;amp; &lt;i&gt;"],
    ['<a href="&#x6A;avascript:alert(1)">x</a>', "x"],
    ['<a href="javascript&colon;alert(1)">x</a>', "x"],
    ['<a href="https://a.example/?q=1&amp;r=2">x</a>', '<a href="https://a.example/?q=1&amp;r=2" rel="nofollow noopener noreferrer" target="_blank">x</a>'],
    ["a&#13;b&#0;c", "a\nb\ufffdc"],
  ])("%j", async (input, expected) => {
    expect(await sanitizeHtml(input)).toBe(expected);
  });

  it.each([
    ["<b>Bob</b> &amp; <i>Eve</i>", "Bob &amp; Eve"],
    ["<<b>img src=x onerror=alert(1)>", ""],
    ["Mallory<xmp><img src=x onerror=alert(1)></xmp>", "Mallory"],
    ["<textarea><img src=x onerror=alert(1)></textarea>ok", "ok"],
    ["a <3 b > c", "a <3 b > c"],
    ["<p>one</p><p>two<br>three</p>", "one\n\ntwo\nthree"],
  ])("plain text of %j", async (input, expected) => {
    expect(await plainText(input)).toBe(expected);
  });
});
