// One sanitiser for every piece of remote HTML (content, summary, profile note and field values), following
// Mastodon's MASTODON_STRICT config (lib/sanitize_ext/sanitize_config.rb; security §2.3, E1–E5), and one plain-text
// extractor for the fields that are text (names, spoiler text, descriptions, poll options).
//
// Safe by construction: the input is read by an HTML5 tokenizer written here (the spec's states for tags,
// attributes, comments, CDATA, and the raw-text / RCDATA / PLAINTEXT switches), and the output is written from
// scratch: only allowlisted elements, attributes whose values were decoded, validated and re-escaped, and text that is
// escaped. Nothing from the input is copied through unparsed, so where this tokenizer and a browser read the input
// differently, the difference can change what text shows, never what markup exists. The output is also kept
// well-formed for an HTML5 parser (no element the parser would close, move or re-open implicitly), so parsing it
// gives exactly the tree written, and serialising and parsing that again gives the same tree
// (test/unit/sanitize-property.test.ts checks both with parse5 over generated inputs).
//
// Why not HTMLRewriter (lol-html): it passes raw-text element contents and source text through as written, so an
// unwrapped <textarea>/<title>/<noscript> handed its contents to the browser as markup. Why not a DOM library: none
// is in the Workers runtime, and this pass is linear and small.

type Attr = { name: string; value: string };
type TextKind = "data" | "rcdata" | "rawtext" | "cdata";
type Mode = "data" | "rawtext" | "rcdata" | "plaintext";

interface Sink {
  startTag(name: string, attrs: Attr[], selfClosing: boolean): Mode;
  endTag(name: string): void;
  text(raw: string, kind: TextKind): void;
  /** A comment, doctype, bogus comment or `</>`: nothing to show, but markup was there. */
  markup(): void;
  inForeign(): boolean;
}

const MAX_INPUT = 512 * 1024;
/** Elements nested deeper than this are unwrapped (E5: a 10,000-deep blockquote renders, flat). */
const MAX_DEPTH = 64;
/**
 * Open input elements (and open SVG/MathML elements) tracked at most; deeper ones are treated as empty. Every end tag
 * searches these lists, so the cap keeps a flood of unclosed tags linear.
 */
const MAX_OPEN = 256;

const ALLOWED = new Set(["p", "br", "span", "a", "del", "s", "pre", "blockquote", "code", "b", "strong", "u", "i", "em", "ul", "ol", "li", "ruby", "rt", "rp"]);
const BLOCK = new Set(["p", "pre", "blockquote", "ul", "ol", "li"]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
// Contents the HTML parser reads as raw text; Mastodon (Sanitize's remove_contents) drops them with the element.
const RAWTEXT = new Set(["script", "style", "xmp", "iframe", "noembed", "noframes", "noscript"]);
// RCDATA: the contents are text (entities decoded); Mastodon unwraps these, so their text stays, escaped.
const RCDATA = new Set(["textarea", "title"]);
const VOID = new Set([
  "area",
  "base",
  "basefont",
  "bgsound",
  "br",
  "col",
  "embed",
  "frame",
  "hr",
  "image",
  "img",
  "input",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);
// Unwrapped elements that Sanitize surrounds with a space so words on either side stay apart.
const SPACED = new Set([
  "address",
  "article",
  "aside",
  "dd",
  "div",
  "dl",
  "dt",
  "footer",
  "header",
  "hgroup",
  "hr",
  "nav",
  "section",
  "table",
  "tr",
  "td",
  "th",
  "caption",
  "figure",
  "figcaption",
  "main",
  "details",
  "summary",
]);
// HTML start tags that end foreign (SVG/MathML) content (the spec's "in foreign content" breakout list).
const BREAKOUT = new Set([
  "b",
  "big",
  "blockquote",
  "body",
  "br",
  "center",
  "code",
  "dd",
  "div",
  "dl",
  "dt",
  "em",
  "embed",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "head",
  "hr",
  "i",
  "img",
  "li",
  "listing",
  "menu",
  "meta",
  "nobr",
  "ol",
  "p",
  "pre",
  "ruby",
  "s",
  "small",
  "span",
  "strong",
  "strike",
  "sub",
  "sup",
  "table",
  "tt",
  "u",
  "ul",
  "var",
]);
// Inside these, HTML tags do not break out of foreign content.
const INTEGRATION = new Set(["foreignobject", "desc", "title", "mi", "mo", "mn", "ms", "mtext", "annotation-xml"]);
const LINK_PROTOCOLS = new Set(["http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini"]);
const CLASS_OK = /^(?:(?:h|p|u|dt|e)-[A-Za-z0-9_-]+|mention|hashtag|ellipsis|invisible|quote-inline)$/;
const LANG_OK = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,4}$/;
const INT_OK = /^-?\d{1,9}$/;

// ---------- character references ----------

// The references decoded here; any other well-formed named reference is passed through to the output as written
// (it can only ever stand for characters, and none of the others stands for a line feed or carriage return).
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0", NewLine: "\n", Tab: "\t" };
// Named references the parser also accepts without the semicolon (the few that matter here).
const LEGACY = ["amp", "lt", "gt", "quot", "AMP", "LT", "GT", "QUOT"];
// Numeric references to 0x80–0x9F mean Windows-1252 characters (the spec's replacement table).
const C1: Record<number, number> = {
  0x80: 0x20ac,
  0x82: 0x201a,
  0x83: 0x0192,
  0x84: 0x201e,
  0x85: 0x2026,
  0x86: 0x2020,
  0x87: 0x2021,
  0x88: 0x02c6,
  0x89: 0x2030,
  0x8a: 0x0160,
  0x8b: 0x2039,
  0x8c: 0x0152,
  0x8e: 0x017d,
  0x91: 0x2018,
  0x92: 0x2019,
  0x93: 0x201c,
  0x94: 0x201d,
  0x95: 0x2022,
  0x96: 0x2013,
  0x97: 0x2014,
  0x98: 0x02dc,
  0x99: 0x2122,
  0x9a: 0x0161,
  0x9b: 0x203a,
  0x9c: 0x0153,
  0x9e: 0x017e,
  0x9f: 0x0178,
};
const NUMERIC = /&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?/y;
const NAMED_REF = /&([A-Za-z][A-Za-z0-9]{0,31});/y;

function numericChar(hex: string | undefined, dec: string | undefined): string {
  const digits = (hex ?? dec)!.replace(/^0+/, "");
  let cp = digits.length > 8 ? 0x110000 : parseInt(digits || "0", hex !== undefined ? 16 : 10);
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  else cp = C1[cp] || cp;
  // A carriage return would not survive a parse of our own output (the parser turns it into a line feed).
  if (cp === 0x0d) cp = 0x0a;
  return String.fromCodePoint(cp);
}

interface Ref {
  /** The decoded text, or null to pass the reference through verbatim. */
  text: string | null;
  length: number;
}

/** The character reference at s[i] === "&", or null when this "&" is a plain ampersand. */
function charRef(s: string, i: number, inAttribute: boolean): Ref | null {
  const c = s.charCodeAt(i + 1);
  if (c === 35 /* # */) {
    NUMERIC.lastIndex = i;
    const m = NUMERIC.exec(s);
    return m ? { text: numericChar(m[1], m[2]), length: m[0].length } : null;
  }
  if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) return null;
  NAMED_REF.lastIndex = i;
  const m = NAMED_REF.exec(s);
  if (m) {
    const name = m[1] ?? ""; // the group always participates
    return { text: Object.hasOwn(NAMED, name) ? (NAMED[name] ?? null) : null, length: m[0].length };
  }
  const legacy = LEGACY.find((name) => s.startsWith(name, i + 1));
  if (!legacy) return null;
  // In attribute values the spec leaves `&amp=` / `&ampx` alone (old query strings).
  if (inAttribute && /[A-Za-z0-9=]/.test(s[i + 1 + legacy.length] ?? "")) return null;
  return { text: NAMED[legacy.toLowerCase()] ?? null, length: 1 + legacy.length }; // every LEGACY name is in NAMED
}

const escapeChar = (c: string) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;");

/** Escapes text for an HTML text node. */
export function escapeText(s: string): string {
  return s.replace(/[&<>]/g, escapeChar);
}

/** Escapes a value for a double-quoted attribute. */
function escapeAttribute(s: string): string {
  return s.replace(/[&<>"]/g, escapeChar);
}

/** Source text in which character references count (data, RCDATA) → escaped HTML text. */
function textToHtml(raw: string): string {
  let out = "";
  let last = 0;
  const n = raw.length;
  for (let i = 0; i < n; ) {
    const c = raw.charCodeAt(i);
    if (c !== 38 && c !== 60 && c !== 62) {
      i++;
      continue;
    }
    out += raw.slice(last, i);
    if (c === 60) {
      out += "&lt;";
      i++;
    } else if (c === 62) {
      out += "&gt;";
      i++;
    } else {
      const ref = charRef(raw, i, false);
      if (!ref) {
        out += "&amp;";
        i++;
      } else {
        out += ref.text === null ? raw.slice(i, i + ref.length) : escapeText(ref.text);
        i += ref.length;
      }
    }
    last = i;
  }
  return last === 0 ? raw : out + raw.slice(last);
}

/** An attribute value with its references decoded (unknown named references stay literal). */
function decodeAttribute(raw: string): string {
  if (!raw.includes("&")) return raw;
  let out = "";
  let last = 0;
  for (let i = raw.indexOf("&"); i >= 0 && i < raw.length; i = raw.indexOf("&", i)) {
    const ref = charRef(raw, i, true);
    if (!ref || ref.text === null) {
      i += ref ? ref.length : 1;
      continue;
    }
    out += raw.slice(last, i) + ref.text;
    i += ref.length;
    last = i;
  }
  return out + raw.slice(last);
}

// ---------- tokenizer ----------

const isWs = (c: string | undefined) => c === " " || c === "\n" || c === "\t" || c === "\f";
const isAlpha = (c: string | undefined) => c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

/** What the input preprocessor of an HTML parser does, plus lone surrogates made U+FFFD (never stored half-valid). */
function preprocess(html: string): string {
  const s = html.length > MAX_INPUT ? html.slice(0, MAX_INPUT) : html;
  return s
    .replace(/\r\n?/g, "\n")
    .replace(/\u0000/g, "\ufffd")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\ufffd");
}

interface Tag {
  name: string;
  attrs: Attr[];
  selfClosing: boolean;
  /** Index just after the tag's ">". */
  next: number;
}

/** Reads a tag whose name starts at s[p]; null when the input ends inside it (the spec drops such a tag). */
function readTag(s: string, p: number): Tag | null {
  const n = s.length;
  let j = p;
  while (j < n && !isWs(s[j]) && s[j] !== "/" && s[j] !== ">") j++;
  const name = asciiLower(s.slice(p, j));
  const attrs: Attr[] = [];
  const seen = new Set<string>();
  let selfClosing = false;
  const add = (a: Attr) => {
    if (!seen.has(a.name)) {
      seen.add(a.name);
      attrs.push(a);
    }
  };
  for (;;) {
    // before attribute name
    while (j < n && isWs(s[j])) j++;
    if (j >= n) return null;
    const c = s[j];
    if (c === ">") return { name, attrs, selfClosing, next: j + 1 };
    if (c === "/") {
      // self-closing start tag state: "/>" closes, "/" followed by anything else is skipped
      if (s[j + 1] === ">") return { name, attrs, selfClosing: true, next: j + 2 };
      j++;
      continue;
    }
    // attribute name (a leading "=" is part of the name)
    const start = j;
    j++;
    while (j < n && !isWs(s[j]) && s[j] !== "/" && s[j] !== ">" && s[j] !== "=") j++;
    const attr: Attr = { name: asciiLower(s.slice(start, j)), value: "" };
    // after attribute name
    while (j < n && isWs(s[j])) j++;
    if (j >= n) return null;
    if (s[j] !== "=") {
      add(attr);
      continue; // "/", ">" or the next attribute's name
    }
    j++;
    // before attribute value
    while (j < n && isWs(s[j])) j++;
    if (j >= n) return null;
    const q = s[j];
    if (q === ">") {
      add(attr);
      return { name, attrs, selfClosing, next: j + 1 };
    }
    if (q === '"' || q === "'") {
      const end = s.indexOf(q, j + 1);
      if (end < 0) return null;
      attr.value = s.slice(j + 1, end);
      j = end + 1;
      // after a quoted value: whitespace, "/", ">" or (missing whitespace) the next attribute
    } else {
      const vs = j;
      while (j < n && !isWs(s[j]) && s[j] !== ">") j++;
      attr.value = s.slice(vs, j);
    }
    add(attr);
    selfClosing = false;
  }
}

/** Drives `sink` over `html` (already preprocessed) as an HTML5 tokenizer would. */
function tokenize(s: string, sink: Sink): void {
  const n = s.length;
  let i = 0;
  let textStart = 0;
  const flush = (end: number) => {
    if (end > textStart) sink.text(s.slice(textStart, end), "data");
  };
  /** Bogus comment or doctype from `from`: ends at the next ">" (or the end). */
  const skipToGt = (from: number) => {
    const gt = s.indexOf(">", from);
    return gt < 0 ? n : gt + 1;
  };
  while (i < n) {
    const lt = s.indexOf("<", i);
    if (lt < 0 || lt + 1 >= n) break;
    const c = s[lt + 1];
    if (c === "!") {
      flush(lt);
      sink.markup();
      if (s.startsWith("<!--", lt)) {
        const q = lt + 4;
        if (s[q] === ">") i = q + 1;
        else if (s.startsWith("->", q)) i = q + 2;
        else {
          // The comment ends at the first "-->" or "--!>".
          i = n;
          for (let k = s.indexOf("--", q); k >= 0; k = s.indexOf("--", k + 1)) {
            if (s[k + 2] === ">") {
              i = k + 3;
              break;
            }
            if (s[k + 2] === "!" && s[k + 3] === ">") {
              i = k + 4;
              break;
            }
          }
        }
      } else if (s.startsWith("<![CDATA[", lt) && sink.inForeign()) {
        const end = s.indexOf("]]>", lt + 9);
        sink.text(s.slice(lt + 9, end < 0 ? n : end), "cdata");
        i = end < 0 ? n : end + 3;
      } else i = skipToGt(lt + 2);
      textStart = i;
      continue;
    }
    if (c === "?") {
      flush(lt);
      sink.markup();
      i = textStart = skipToGt(lt + 2);
      continue;
    }
    if (c === "/") {
      const d = s[lt + 2];
      if (d === undefined) break; // "</" at the end is text
      flush(lt);
      if (d === ">") {
        sink.markup();
        i = textStart = lt + 3;
      } else if (isAlpha(d)) {
        const tag = readTag(s, lt + 2);
        if (!tag) return; // the input ended inside the tag
        sink.endTag(tag.name);
        i = textStart = tag.next;
      } else {
        sink.markup();
        i = textStart = skipToGt(lt + 2);
      }
      continue;
    }
    if (!isAlpha(c)) {
      i = lt + 1; // a "<" that starts nothing is text
      continue;
    }
    flush(lt);
    const tag = readTag(s, lt + 1);
    if (!tag) return;
    const mode = sink.startTag(tag.name, tag.attrs, tag.selfClosing);
    i = textStart = tag.next;
    if (mode === "plaintext") {
      sink.text(s.slice(i), "rawtext");
      return;
    }
    if (mode === "rawtext" || mode === "rcdata") {
      // Everything up to the appropriate end tag is text: "</name" followed by whitespace, "/" or ">".
      let k = i;
      let end = -1;
      for (k = s.indexOf("</", k); k >= 0; k = s.indexOf("</", k)) {
        const after = s[k + 2 + tag.name.length];
        if (asciiLower(s.slice(k + 2, k + 2 + tag.name.length)) === tag.name && (isWs(after) || after === "/" || after === ">")) {
          end = k;
          break;
        }
        k += 2;
      }
      sink.text(s.slice(i, end < 0 ? n : end), mode === "rcdata" ? "rcdata" : "rawtext");
      if (end < 0) return;
      const close = readTag(s, end + 2);
      if (!close) return;
      sink.endTag(close.name);
      i = textStart = close.next;
    }
  }
  flush(n);
}

// ---------- what both sinks share: dropped subtrees, foreign content, MathML annotations ----------

interface MathCapture {
  display: boolean;
  firstChild: string | null;
  tex: string | null;
  plain: string | null;
  current: { encoding: "tex" | "plain"; depth: number; text: string } | null;
}

abstract class BaseSink implements Sink {
  /** A dropped subtree (template): its name and nesting depth. */
  protected drop: { name: string; depth: number } | null = null;
  /** Open SVG/MathML elements, outermost first; empty outside foreign content. */
  protected foreign: string[] = [];
  protected math: MathCapture | null = null;
  sawMarkup = false;

  inForeign(): boolean {
    return this.foreign.length > 0;
  }

  markup(): void {
    this.sawMarkup = true;
  }

  protected abstract htmlStart(name: string, attrs: Attr[], selfClosing: boolean): Mode;
  protected abstract htmlEnd(name: string): void;
  protected abstract htmlText(raw: string, kind: TextKind): void;
  /** Plain text to show (MathML's annotation), already decoded. */
  protected abstract plain(text: string): void;
  protected abstract isOpen(name: string): boolean;

  startTag(name: string, attrs: Attr[], selfClosing: boolean): Mode {
    this.sawMarkup = true;
    if (this.drop) {
      if (name === this.drop.name && !selfClosing) this.drop.depth++;
      return rawMode(name);
    }
    if (this.foreign.length) {
      const top = this.foreign[this.foreign.length - 1]!; // non-empty: checked just above
      const breaks = BREAKOUT.has(name) || (name === "font" && attrs.some((a) => a.name === "color" || a.name === "face" || a.name === "size"));
      if (!breaks || INTEGRATION.has(top)) {
        this.foreignStart(name, attrs, selfClosing);
        return "data";
      }
      this.endForeign();
    }
    if (name === "svg" || name === "math") {
      if (!selfClosing) {
        this.foreign.push(name);
        this.math =
          name === "math"
            ? { display: attrs.some((a) => a.name === "display" && a.value === "block"), firstChild: null, tex: null, plain: null, current: null }
            : null;
      }
      return "data";
    }
    if (name === "template") {
      if (!selfClosing) this.drop = { name, depth: 1 };
      return "data";
    }
    const mode = rawMode(name);
    if (mode !== "data") return mode;
    return this.htmlStart(name, attrs, selfClosing);
  }

  endTag(name: string): void {
    this.sawMarkup = true;
    if (this.drop) {
      if (name === this.drop.name && --this.drop.depth === 0) this.drop = null;
      return;
    }
    if (this.foreign.length) {
      if (name !== "p" && name !== "br") {
        const k = this.foreign.lastIndexOf(name);
        if (k >= 0) {
          this.popForeign(k);
          return;
        }
        // The spec walks down to the HTML element below: an end tag that closes nothing there is ignored.
        if (!this.isOpen(name)) return;
      }
      this.endForeign();
    }
    this.htmlEnd(name);
  }

  text(raw: string, kind: TextKind): void {
    if (this.drop || kind === "rawtext") return;
    if (this.foreign.length) {
      const cur = this.math?.current;
      if (cur) cur.text += kind === "cdata" ? raw : decodeAttribute(raw);
      return;
    }
    this.htmlText(raw, kind);
  }

  /** Ends the document: whatever foreign content is still open ends here. */
  finish(): void {
    if (this.foreign.length) this.endForeign();
  }

  private foreignStart(name: string, attrs: Attr[], selfClosing: boolean): void {
    const m = this.math;
    const depth = this.foreign.length;
    if (m) {
      // Mastodon's MATH_TRANSFORMER: <math><semantics>…<annotation encoding="application/x-tex|text/plain">
      if (depth === 1 && m.firstChild === null) m.firstChild = name;
      if (depth === 2 && m.firstChild === "semantics" && this.foreign[1] === "semantics" && name === "annotation" && !m.current) {
        const enc = attrs.find((a) => a.name === "encoding")?.value;
        const encoding = enc === "application/x-tex" ? "tex" : enc === "text/plain" ? "plain" : null;
        if (encoding && m[encoding] === null && !selfClosing) m.current = { encoding, depth: depth + 1, text: "" };
      }
    }
    if (!selfClosing && this.foreign.length < MAX_OPEN) this.foreign.push(name);
  }

  private popForeign(k: number): void {
    this.foreign.length = k;
    const m = this.math;
    if (m?.current && this.foreign.length < m.current.depth) {
      m[m.current.encoding] = m.current.text;
      m.current = null;
    }
    if (k === 0) this.endForeign();
  }

  private endForeign(): void {
    const m = this.math;
    if (m?.current) m[m.current.encoding] = m.current.text;
    this.foreign.length = 0;
    this.math = null;
    if (!m) return;
    const text = m.tex !== null ? (m.display ? `$$${m.tex}$$` : `$${m.tex}$`) : m.plain;
    if (text) this.plain(text);
  }
}

function rawMode(name: string): Mode {
  if (RAWTEXT.has(name)) return "rawtext";
  if (RCDATA.has(name)) return "rcdata";
  if (name === "plaintext") return "plaintext";
  return "data";
}

// ---------- the HTML sink ----------

interface Open {
  name: string;
  /** Index in the output stack of the first element this input element opened; -1 when it opened none. */
  e: number;
  /** A link whose href was refused: its contents become text (Mastodon replaces the <a> with its text). */
  textOnly?: boolean;
  spaced?: boolean;
}

class HtmlSink extends BaseSink {
  private out: string[] = [];
  /** Elements open in the output, outermost first, and the index in `open` of the input element that opened each. */
  private stack: string[] = [];
  private owner: number[] = [];
  /** Elements open in the input, with what each opened in the output. */
  private open: Open[] = [];
  private textOnly = 0;
  /** Right after <pre>: the parser drops one leading line feed, so none may start its text. */
  private preStart = false;

  result(): string {
    this.finish();
    this.closeTo(0);
    return this.out.join("");
  }

  protected isOpen(name: string): boolean {
    return this.open.some((o) => o.name === name);
  }

  private write(html: string): void {
    this.out.push(html);
    this.preStart = false;
  }

  private writeText(html: string): void {
    if (this.preStart) html = html.replace(/^\n+/, "");
    if (html) this.write(html);
  }

  private openElement(name: string, attrs = ""): boolean {
    if (this.stack.length >= MAX_DEPTH) return false;
    this.write(`<${name}${attrs}>`);
    this.stack.push(name);
    this.owner.push(this.open.length);
    this.preStart = name === "pre";
    return true;
  }

  /**
   * Closes output elements down to `k` open ones. The input elements that had opened them are closed too, with
   * everything opened inside them (as the parser pops them), so a later stray end tag cannot match them.
   */
  private closeTo(k: number): void {
    if (this.stack.length <= k) return;
    let j = this.owner[k]!; // owner is pushed and popped with stack, which has more than k entries
    while (this.stack.length > k) {
      this.write(`</${this.stack.pop()}>`);
      this.owner.pop();
    }
    const at = this.open[j];
    if (at === undefined) return; // j >= open.length
    if (at.e < k) j++; // a heading whose <strong> closes keeps its <p>
    for (const o of this.open.slice(j)) if (o.textOnly) this.textOnly--;
    if (j < this.open.length) this.open.length = j;
  }

  /** Like the parser's "close a p element" before a block: a <p> never holds a block. */
  private closeParagraph(): void {
    const k = this.stack.lastIndexOf("p");
    if (k >= 0) this.closeTo(k);
  }

  private push(o: Open): void {
    // Past the cap, an element that opened nothing in the output is not tracked (its end tag then closes nothing,
    // or an outer element of the same name). One that did open something is always tracked.
    if (this.open.length < MAX_OPEN || o.e >= 0 || o.textOnly) this.open.push(o);
  }

  protected htmlStart(name: string, attrs: Attr[]): Mode {
    if (name === "br") {
      if (!this.textOnly) this.write("<br>");
      return "data";
    }
    if (VOID.has(name)) {
      if (SPACED.has(name)) this.writeText(" ");
      return "data";
    }
    const lang = attrs.find((a) => a.name === "lang");
    const langAttr = lang && LANG_OK.test(decodeAttribute(lang.value)) ? ` lang="${escapeAttribute(decodeAttribute(lang.value))}"` : "";
    if (HEADINGS.has(name)) {
      // Mastodon: <h1>…</h1> → <p><strong>…</strong></p>
      if (this.textOnly) {
        this.pushUnwrapped(name);
        return "data";
      }
      this.closeParagraph();
      const k = this.stack.length;
      if (k + 2 <= MAX_DEPTH && this.openElement("p", langAttr) && this.openElement("strong")) this.push({ name, e: k });
      else this.pushUnwrapped(name);
      return "data";
    }
    if (!ALLOWED.has(name)) {
      const spaced = SPACED.has(name);
      if (spaced) this.writeText(" ");
      this.push({ name, e: -1, spaced });
      return "data";
    }
    if (this.textOnly) {
      this.pushUnwrapped(name);
      return "data";
    }
    let extra = "";
    if (name === "a") {
      const href = linkHref(attrs);
      if (href === null) {
        this.textOnly++;
        this.push({ name, e: -1, textOnly: true });
        return "data";
      }
      // Nested links: the parser would close the outer one; here the inner one is unwrapped.
      if (this.stack.includes("a")) {
        this.pushUnwrapped(name);
        return "data";
      }
      extra = ` href="${escapeAttribute(href)}" rel="nofollow noopener noreferrer" target="_blank"`;
    }
    if (BLOCK.has(name)) {
      if (name === "li") {
        // A new item closes the open one (through inline elements and paragraphs, not through other blocks).
        for (let k = this.stack.length - 1; k >= 0; k--) {
          const t = this.stack[k];
          if (t === "li") {
            this.closeTo(k);
            break;
          }
          if (t === "blockquote" || t === "pre" || t === "ul" || t === "ol") break;
        }
      }
      this.closeParagraph();
      const top = this.stack[this.stack.length - 1];
      if (name === "li" && top !== "ul" && top !== "ol") {
        this.pushUnwrapped(name);
        return "data";
      }
    }
    if (name === "rt" || name === "rp") {
      const top = this.stack[this.stack.length - 1];
      if ((top === "rt" || top === "rp") && this.stack[this.stack.length - 2] === "ruby") this.closeTo(this.stack.length - 1);
      if (this.stack[this.stack.length - 1] !== "ruby") {
        this.pushUnwrapped(name);
        return "data";
      }
    }
    if (name === "a" || name === "span" || name === "p") {
      const cls = attrs.find((a) => a.name === "class");
      const kept = cls
        ? decodeAttribute(cls.value)
            .split(/[\t\n\f\r ]+/)
            .filter((c) => CLASS_OK.test(c))
        : [];
      if (kept.length) extra += ` class="${kept.join(" ")}"`;
    }
    if (name === "a" || name === "span") {
      const tr = attrs.find((a) => a.name === "translate");
      if (tr && decodeAttribute(tr.value) === "no") extra += ` translate="no"`;
    }
    if (name === "ol") {
      const start = attrs.find((a) => a.name === "start");
      if (start && INT_OK.test(decodeAttribute(start.value))) extra += ` start="${decodeAttribute(start.value)}"`;
      if (attrs.some((a) => a.name === "reversed")) extra += ` reversed=""`;
    }
    if (name === "li") {
      const value = attrs.find((a) => a.name === "value");
      if (value && INT_OK.test(decodeAttribute(value.value))) extra += ` value="${decodeAttribute(value.value)}"`;
    }
    const k = this.stack.length;
    this.push({ name, e: this.openElement(name, extra + langAttr) ? k : -1 });
    return "data";
  }

  private pushUnwrapped(name: string): void {
    this.push({ name, e: -1 });
  }

  protected htmlEnd(name: string): void {
    if (name === "br") {
      if (!this.textOnly) this.write("<br>");
      return;
    }
    const heading = HEADINGS.has(name);
    const idx = this.open.findLastIndex((o) => o.name === name || (heading && HEADINGS.has(o.name)));
    if (idx < 0) return; // an end tag that closes nothing
    let first = Infinity;
    let spaced = false;
    for (const o of this.open.slice(idx)) {
      if (o.e >= 0) first = Math.min(first, o.e);
      if (o.textOnly) this.textOnly--;
      if (o.spaced) spaced = true;
    }
    this.open.length = idx;
    if (first !== Infinity) this.closeTo(first);
    if (spaced) this.writeText(" ");
  }

  protected htmlText(raw: string, _kind: TextKind): void {
    this.writeText(textToHtml(raw));
  }

  protected plain(text: string): void {
    this.writeText(escapeText(text));
  }
}

/** The href of a link Mastodon keeps: a parseable URL with an allowed scheme; null otherwise (the link becomes text). */
function linkHref(attrs: Attr[]): string | null {
  const a = attrs.find((x) => x.name === "href");
  if (!a) return null;
  const href = decodeAttribute(a.value);
  // Whitespace or controls anywhere (Mastodon: a leading space makes the href unparsable), or no scheme (relative).
  if (href.length > 4096 || /[\u0000-\u0020\u007f-\u009f]/.test(href)) return null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href)?.[1]?.toLowerCase();
  if (!scheme || !LINK_PROTOCOLS.has(scheme)) return null;
  try {
    if (new URL(href).protocol !== `${scheme}:`) return null;
  } catch {
    return null;
  }
  return href;
}

// ---------- the plain-text sink ----------

const TEXT_BREAK_BEFORE = new Set(["p", "div", "li", "blockquote", "pre", "ul", "ol", "tr", "h1", "h2", "h3", "h4", "h5", "h6"]);

class TextSink extends BaseSink {
  private out: string[] = [];
  private open: string[] = [];

  result(): string {
    this.finish();
    return this.out.join("");
  }

  protected isOpen(name: string): boolean {
    return this.open.includes(name);
  }

  protected htmlStart(name: string, _attrs: Attr[], selfClosing: boolean): Mode {
    if (name === "br") this.out.push("\n");
    else if (!VOID.has(name) && !selfClosing && this.open.length < MAX_OPEN) this.open.push(name);
    return "data";
  }

  protected htmlEnd(name: string): void {
    if (name === "br") {
      this.out.push("\n");
      return;
    }
    const k = this.open.lastIndexOf(name);
    if (k < 0) return;
    this.open.length = k;
    if (name === "p" || HEADINGS.has(name)) this.out.push("\n\n");
    else if (TEXT_BREAK_BEFORE.has(name)) this.out.push("\n");
  }

  protected htmlText(raw: string): void {
    this.out.push(raw);
  }

  protected plain(text: string): void {
    this.out.push(text);
  }
}

// ---------- exports ----------

/** Remote HTML → HTML holding only what MASTODON_STRICT allows, well-formed and stable under re-parsing. */
export function sanitizeHtml(html: string): string {
  if (!html) return "";
  const sink = new HtmlSink();
  tokenize(preprocess(html), sink);
  return sink.result();
}

/**
 * sanitizeHtml within `max` characters: the sanitized HTML when it fits, else its text cut and sanitized again in one
 * paragraph (a cut through the HTML could end inside a tag or an attribute). The text keeps its character references
 * as written (plainText), so sanitizing it again reads them as references: nothing is escaped twice.
 */
export function sanitizeHtmlWithin(html: string, max: number): string {
  const clean = sanitizeHtml(html);
  if (clean.length <= max) return clean;
  const text = plainText(clean);
  const cut = (n: number) =>
    sanitizeHtml(
      `<p>${text
        .slice(0, n)
        .replace(/[\uD800-\uDBFF]$/, "")
        .replace(/&[#A-Za-z0-9]*$/, "")}</p>`,
    );
  let n = Math.min(text.length, max);
  let out = cut(n);
  // A character comes out as 1–6 (a raw `&` as `&amp;`): taking out a sixth of the excess a time ends within a few
  // characters of `max`.
  while (out.length > max && n > 0) {
    n -= Math.ceil((out.length - max) / 6);
    out = cut(n);
  }
  return out;
}

function textOnce(s: string): { text: string; markup: boolean } {
  const sink = new TextSink();
  tokenize(s, sink);
  return { text: sink.result(), markup: sink.sawMarkup };
}

/**
 * The text of remote HTML, for fields that are plain text (display names, spoiler text, descriptions, poll options,
 * field names) and for search and notifications: tags, comments and the contents of script/style-like elements
 * removed, <br> and paragraph ends as line breaks, character references left as written (Mastodon stores these
 * fields verbatim). The result holds no markup: text that only became a tag once the tags around it were removed
 * (`<<b>img …>`) is removed in another pass.
 */
export function plainText(html: string): string {
  if (!html) return "";
  let s = preprocess(html);
  for (let round = 0; round < 4; round++) {
    const r = textOnce(s);
    s = r.text;
    if (!r.markup) return s.trim();
  }
  if (textOnce(s).markup) s = s.replace(/</g, "");
  return s.trim();
}

/** Plain text from HTML (names, summaries used as text, report comments, push bodies); see plainText. */
export const htmlToText = plainText;
