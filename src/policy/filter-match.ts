// Matching statuses against a viewer's content filters, in memory. The viewer's active filters (keywords, and the
// status filters that name a status of the page) arrive with the page's other rows in renderStatuses' one D1 batch
// (activeFilterRules), are compiled once per request (compileFilters: one case-insensitive RegExp per filter), and
// each status is matched with matchFilters. Mastodon's rules (app/models/custom_filter.rb, custom_filter_keyword.rb,
// status_relationships_presenter.rb, Status#searchable_text):
// - a keyword matches case-insensitively anywhere; a whole-word keyword gets a word boundary only on a side where it
//   starts or ends with a word character (so "#tag" or "c++" still match at their punctuation), with Unicode word
//   characters as Ruby's [[:word:]] and \b use them;
// - the text matched is the content as plain text, the content warning, the poll options and the media
//   descriptions; for a boost, the boosted status's;
// - keyword_matches holds the first match in the text (as it appears there); status_matches the filtered ids among
//   the status and, for a boost, the boosted status.
import type { SQL } from "drizzle-orm";
import { lazy } from "../lib/limits/lazy";
import type { DB } from "../db/client";
import { bindTextWith, boundText } from "../db/bound-sql";
import type { FilterAction, FilterContext } from "../db/schema";
import { padId, unpadId } from "../lib/text/ids";

export interface CompiledFilter {
  id: string;
  title: string;
  context: FilterContext[];
  action: FilterAction;
  expiresAt: number | null;
  /** Every keyword of the filter in one alternation; null when the filter has none. */
  regex: RegExp | null;
  /** The filter's status filters that name a status of the page being rendered. */
  statusIds: Set<string>;
}

export interface FilterMatch {
  filter: CompiledFilter;
  keywordMatches: string[] | null;
  statusMatches: string[] | null;
}

/** One row per keyword (kind 0) or page-relevant status filter (kind 1) of an active filter. */
export interface FilterRuleRow {
  filter_id: string;
  filter_title: string;
  filter_context: string;
  filter_action: string;
  filter_expires_at: number | null;
  kind: number;
  rule_id: string;
  keyword: string | null;
  whole_word: number | null;
  rule_status_id: string | null;
}

/**
 * The viewer's active filters as rule rows: every keyword, and the status filters naming one of `statusIds` (a SQL
 * list, e.g. the page's ids and their boost targets). One statement, for renderStatuses' batch.
 */
export function activeFilterRules(db: DB, viewerId: string, statusIds: SQL, now: number) {
  return db.all<FilterRuleRow>(bindTextWith(db, FILTER_RULES(), { v: padId(viewerId), now }, { ids: statusIds }));
}

// Its text parsed once per isolate (db/bound-sql.ts): `$v` the viewer, `$now` the time, `$ids` the statuses' list.
const FILTER_RULES = lazy(() =>
  boundText(`
    SELECT f.id AS filter_id, f.title AS filter_title, f.context AS filter_context, f.action AS filter_action,
      f.expires_at AS filter_expires_at, 0 AS kind, k.id AS rule_id, k.keyword AS keyword, k.whole_word AS whole_word,
      NULL AS rule_status_id
    FROM custom_filter_keywords k JOIN custom_filters f ON f.id = k.custom_filter_id
    WHERE k.account_id = $v AND f.account_id = $v AND (f.expires_at IS NULL OR f.expires_at > $now)
    UNION ALL
    SELECT f.id, f.title, f.context, f.action, f.expires_at, 1, fs.id, NULL, NULL, fs.status_id
    FROM custom_filter_statuses fs JOIN custom_filters f ON f.id = fs.custom_filter_id
    WHERE fs.account_id = $v AND fs.status_id IN $ids AND f.account_id = $v
      AND (f.expires_at IS NULL OR f.expires_at > $now)
    ORDER BY filter_id, kind, rule_id`),
);

// Ruby's [[:word:]] and (Onigmo, word-bound-all-range) \b: Unicode letters, marks, decimal digits, connectors.
const WORD = String.raw`[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]`;
const startsWithWord = lazy(() => new RegExp(`^${WORD}`, "u"));
const endsWithWord = lazy(() => new RegExp(`${WORD}$`, "u"));

/** Escapes what is syntax in a `u`-mode RegExp (an escaped non-syntax character is an error there). */
function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** One keyword as a pattern: a word boundary only on a side where the keyword itself begins or ends with a word character. */
export function keywordPattern(keyword: string, wholeWord: boolean): string {
  const body = escapeRegExp(keyword);
  if (!wholeWord) return body;
  const start = startsWithWord().test(keyword) ? `(?<!${WORD})` : "";
  const end = endsWithWord().test(keyword) ? `(?!${WORD})` : "";
  return `${start}${body}${end}`;
}

/** A filter's keywords as one case-insensitive RegExp (leftmost match wins, then the earlier keyword), or null. */
export function keywordsRegExp(keywords: { keyword: string; wholeWord: boolean }[]): RegExp | null {
  const parts = keywords.filter((k) => k.keyword !== "").map((k) => keywordPattern(k.keyword, k.wholeWord));
  if (!parts.length) return null;
  try {
    return new RegExp(parts.join("|"), "iu");
  } catch {
    // A keyword with an unpaired surrogate can make the pattern invalid: such a filter matches by status only.
    return null;
  }
}

function parseContext(raw: string): FilterContext[] {
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? (v.filter((x) => typeof x === "string") as FilterContext[]) : [];
  } catch {
    return [];
  }
}

/** Rule rows (ordered by filter, kind, rule id) → one compiled filter each, in filter id order. */
export function compileFilters(rows: FilterRuleRow[]): CompiledFilter[] {
  const out: CompiledFilter[] = [];
  let cur: { f: CompiledFilter; keywords: { keyword: string; wholeWord: boolean }[] } | null = null;
  const finish = () => {
    if (cur) cur.f.regex = keywordsRegExp(cur.keywords);
  };
  for (const r of rows) {
    const id = unpadId(String(r.filter_id));
    if (!cur || cur.f.id !== id) {
      finish();
      const base: Omit<CompiledFilter, "regex" | "statusIds"> = {
        id,
        title: r.filter_title,
        context: parseContext(r.filter_context),
        action: (r.filter_action as FilterAction) ?? "warn",
        expiresAt: r.filter_expires_at == null ? null : Number(r.filter_expires_at),
      };
      cur = { f: { ...base, regex: null, statusIds: new Set() }, keywords: [] };
      out.push(cur.f);
    }
    if (Number(r.kind) === 0 && r.keyword != null) cur.keywords.push({ keyword: r.keyword, wholeWord: !!Number(r.whole_word) });
    else if (r.rule_status_id != null) cur.f.statusIds.add(unpadId(String(r.rule_status_id)));
  }
  finish();
  return out;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/gi, (m, e: string) => {
    if (e[0] === "#") {
      const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/** Sanitised status HTML → plain text (Mastodon's PlainTextFormatter): line breaks kept, tags dropped, entities decoded. */
export function htmlToPlain(html: string): string {
  return decodeEntities(
    html
      .replace(/<br\s*\/?>/gi, "\n")
      .replace(/<\/p>\s*<p[^>]*>/gi, "\n\n")
      .replace(/<[^>]*>/g, ""),
  );
}

/** What keywords are matched against (Mastodon's Status#searchable_text). */
export function searchableText(
  s: { local: boolean; text: string; content: string; spoilerText: string },
  mediaDescriptions: (string | null)[],
  pollOptions: string[] | null,
): string {
  const plain = s.local && s.text ? s.text : htmlToPlain(s.content);
  const parts = [s.spoilerText, plain];
  if (pollOptions) parts.push(pollOptions.join("\n\n"));
  parts.push(mediaDescriptions.map((d) => d ?? "").join("\n\n"));
  return parts.join("\n\n");
}

/**
 * The filters that match a status: `text` is asked for only when some filter has keywords; `ids` are the status and,
 * for a boost, the boosted status. With a context, only filters that apply there are considered.
 */
export function matchFilters(filters: CompiledFilter[], text: () => string, ids: string[], context?: FilterContext): FilterMatch[] {
  const out: FilterMatch[] = [];
  let t: string | null = null;
  for (const f of filters) {
    if (context && !f.context.includes(context)) continue;
    let keywordMatches: string[] | null = null;
    if (f.regex) {
      t ??= text();
      const m = f.regex.exec(t);
      if (m) keywordMatches = [m[0]];
    }
    let statusMatches: string[] | null = null;
    if (f.statusIds.size) {
      const hit = ids.filter((id) => f.statusIds.has(id));
      if (hit.length) statusMatches = hit;
    }
    if (keywordMatches || statusMatches) out.push({ filter: f, keywordMatches, statusMatches });
  }
  return out;
}
