// Mastodon's status search syntax (app/lib/search_query_parser.rb and search_query_transformer.rb), parsed into
// clauses the SQL side turns into conditions: words and "quoted phrases" (a leading `-` excludes, `+` is the same as
// nothing), `#hashtags`, and the prefixes has: is: language: from: before: after: during: in:. Anything else is a word.
//
// User text never reaches FTS5's query syntax: `ftsMatch` quotes every word and phrase as an FTS5 string (inside one,
// only `"` is special, and it is doubled), and joins them with operators it writes itself. Words without a letter or a
// digit (`*`, `^`, `(`, emoji) would match nothing and are dropped.
import { unprocessable } from "../http/errors";
import { lazy } from "../limits/lazy";
import { normalizeTag } from "./text";

export type SearchScope = "all" | "library" | "public";

export interface TextClause {
  text: string;
  negated: boolean;
}

export interface ValueClause {
  value: string;
  negated: boolean;
}

/** A time range in epoch milliseconds, [lo, hi); null = open. */
export interface DateClause {
  lo: number | null;
  hi: number | null;
  negated: boolean;
}

export interface ParsedSearch {
  text: TextClause[];
  tags: ValueClause[];
  has: ValueClause[];
  is: ValueClause[];
  languages: ValueClause[];
  /** `me`, `user` or `user@domain` (leading @ removed); null when it cannot name an account (matches nothing). */
  from: { value: string | null; negated: boolean }[];
  dates: DateClause[];
  scope: SearchScope;
}

/** Clauses kept per query (the rest is ignored): bounds the statement's size and bound parameters. */
export const MAX_CLAUSES = 16;
/** Longest word or phrase kept. */
const MAX_TERM = 200;
const DAY_MS = 86_400_000;
const PREFIXES = new Set(["has", "is", "language", "from", "before", "after", "during", "in"]);
const tokenChar = lazy(() => /[\p{L}\p{N}\p{Co}]/u);
const HANDLE = /^([A-Za-z0-9_]+)(?:@([A-Za-z0-9.-]+(?::\d+)?))?$/;

/** Mastodon's TermValidator: `yyyy-MM-dd` (a UTC day) or epoch milliseconds; otherwise 422 "Invalid date …". */
function dateRange(value: string): [number, number] {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    // setUTCFullYear, not Date.UTC: the latter reads years 0–99 as 1900–1999.
    const d = new Date(0);
    d.setUTCFullYear(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    const t = d.getTime();
    if (d.getUTCFullYear() === Number(day[1]) && d.getUTCMonth() === Number(day[2]) - 1 && d.getUTCDate() === Number(day[3])) return [t, t + DAY_MS];
  } else if (/^\d{1,19}$/.test(value)) {
    const t = Math.min(Number(value), 8.64e15);
    return [t, t + 1];
  }
  throw unprocessable(`Invalid date ${value.slice(0, 100)}`);
}

/** Mastodon's language_code_from_term, for the codes statuses store (lower case, no region). */
function languageCode(value: string): string {
  return value.toLowerCase().split(/[-_]/)[0] ?? "";
}

interface RawClause {
  negated: boolean;
  prefix: string | null;
  value: string;
  quoted: boolean;
}

/** Splits the query: [+-]?(prefix:)?("phrase"|word), whitespace between; a quote without its pair is dropped. */
function clauses(q: string): RawClause[] {
  const out: RawClause[] = [];
  const s = q.replace(/[\u0000-\u001f\u007f]/g, " ");
  let i = 0;
  const readQuoted = (): string | null => {
    const end = s.indexOf('"', i + 1);
    if (end < 0) return null;
    const v = s.slice(i + 1, end);
    i = end + 1;
    return v;
  };
  while (i < s.length && out.length < 4 * MAX_CLAUSES) {
    if (/\s/.test(s[i]!)) {
      i++;
      continue;
    }
    let negated = false;
    if (s[i] === "-" || s[i] === "+") {
      negated = s[i] === "-";
      i++;
      if (i >= s.length || /\s/.test(s[i]!)) continue;
    }
    let prefix: string | null = null;
    const m = /^([A-Za-z]+):/.exec(s.slice(i, i + 12));
    if (m && PREFIXES.has(m[1]!.toLowerCase())) {
      prefix = m[1]!.toLowerCase();
      i += m[0].length;
    }
    if (s[i] === '"') {
      const v = readQuoted();
      if (v !== null) {
        out.push({ negated, prefix, value: v, quoted: true });
        continue;
      }
      i++; // a lone quote: ignored
      if (prefix === null) continue;
    }
    const start = i;
    while (i < s.length && !/\s/.test(s[i]!) && s[i] !== '"') i++;
    const word = s.slice(start, i);
    if (word || prefix) out.push({ negated, prefix, value: word, quoted: false });
  }
  return out;
}

export function parseSearchQuery(q: string): ParsedSearch {
  const p: ParsedSearch = { text: [], tags: [], has: [], is: [], languages: [], from: [], dates: [], scope: "all" };
  let kept = 0;
  for (const c of clauses(q)) {
    if (kept >= MAX_CLAUSES) break;
    const value = c.value.trim();
    const negated = c.negated;
    switch (c.prefix) {
      case "has":
      case "is":
        if (!value) continue;
        p[c.prefix].push({ value: value.toLowerCase(), negated });
        break;
      case "language":
        if (!value) continue;
        p.languages.push({ value: languageCode(value), negated });
        break;
      case "from": {
        const h = HANDLE.exec(value.replace(/^@/, ""));
        p.from.push({ value: value.toLowerCase() === "me" ? "me" : h ? h[0]! : null, negated });
        break;
      }
      case "before":
      case "after":
      case "during": {
        const [start, end] = dateRange(value);
        if (c.prefix === "before") p.dates.push({ lo: null, hi: start, negated });
        else if (c.prefix === "after") p.dates.push({ lo: end, hi: null, negated });
        else p.dates.push({ lo: start, hi: end, negated });
        break;
      }
      case "in": {
        const v = value.toLowerCase();
        p.scope = v === "library" || v === "public" ? v : "all";
        break;
      }
      default: {
        if (!c.quoted && value.startsWith("#")) {
          const name = normalizeTag(value.slice(1));
          if (name) {
            p.tags.push({ value: name, negated });
            break;
          }
        }
        const text = value.slice(0, MAX_TERM);
        if (!tokenChar().test(text)) continue;
        p.text.push({ text, negated });
      }
    }
    kept++;
  }
  return p;
}

/** An FTS5 string: the whole text is literal, `"` doubled. */
export const ftsString = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * The FTS5 MATCH expressions of the text clauses: `match` for what must be there (with the excluded ones cut out by
 * NOT), or, when nothing is required, `exclude` alone, for the caller to subtract.
 */
export function ftsMatch(text: readonly TextClause[]): { match: string | null; exclude: string | null } {
  const must = text.filter((t) => !t.negated).map((t) => ftsString(t.text));
  const not = text.filter((t) => t.negated).map((t) => ftsString(t.text));
  const exclude = not.length ? not.join(" OR ") : null;
  if (!must.length) return { match: null, exclude };
  const all = must.join(" AND ");
  return { match: exclude ? `(${all}) NOT (${exclude})` : all, exclude: null };
}
