// The full-text index of statuses (migrations/0018_status_search.sql): what a status is found by, and the one statement
// that writes it. Every write that creates or changes a status's searchable parts (postStatus, editStatus, a remote
// Create or Update) puts `searchIndexStatement` in its own batch, so the index never lags the status; a deleted status
// leaves it through a trigger on `statuses`, in the batch that deletes it. Boosts are not indexed (they have no text).
//
// What is searchable is Mastodon's `Status#searchable_text`: the content warning, the text without markup, the poll
// options and the media descriptions.
import { sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { plainText } from "../../federation/remote/sanitize";
import { padId } from "../../lib/text/ids";

/** Longest text indexed per status (a remote article can be long; a local status is at most 500 characters + media). */
export const MAX_SEARCH_TEXT = 50_000;

export interface SearchableParts {
  spoilerText: string;
  /** Plain text: a local status's source text, or `htmlSearchText(content)` for a remote one. */
  text: string;
  pollOptions?: readonly string[] | null;
  mediaDescriptions?: readonly (string | null | undefined)[];
}

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Character references in text taken out of HTML (plainText leaves them as written). */
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (m, ref: string) => {
    if (ref[0] !== "#") return NAMED[ref.toLowerCase()] ?? m;
    const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : m;
  });
}

/** The searchable text of sanitised status HTML: no tags, references decoded. */
export function htmlSearchText(html: string): string {
  return decodeEntities(plainText(html));
}

/** Mastodon's searchable_text: the parts that are present, a blank line apart, capped. */
export function searchableText(p: SearchableParts): string {
  const parts = [p.spoilerText, p.text, (p.pollOptions ?? []).join("\n"), (p.mediaDescriptions ?? []).filter((d): d is string => !!d).join("\n")];
  return parts
    .map((x) => x.trim())
    .filter(Boolean)
    .join("\n\n")
    .slice(0, MAX_SEARCH_TEXT);
}

/**
 * Writes (or rewrites) a status's row of the index; the triggers of `status_search` keep the FTS5 index in step. The
 * id travels as padded TEXT and becomes the INTEGER key in SQL, so it never passes through a JS number.
 */
export function searchIndexStatement(db: DB, statusId: string, p: SearchableParts): Statement {
  const text = searchableText(p);
  return db.run(sql`INSERT INTO status_search (id, text) VALUES (CAST(${padId(statusId)} AS INTEGER), ${text})
    ON CONFLICT(id) DO UPDATE SET text = excluded.text WHERE status_search.text IS NOT excluded.text`);
}
