// LIKE with user text, in one place: wildcards and the escape character escaped, and the pattern cut so that D1's
// 50-byte limit on LIKE patterns (escapes and wildcards included) is never exceeded (security A17).
import { sql, type AnyColumn, type SQL } from "drizzle-orm";

export const MAX_LIKE_BYTES = 50;

/** `text` escaped for LIKE and cut to leave `reserve` bytes for the caller's own `%` wildcards. Never splits a code point or an escape. */
export function likeText(text: string, reserve: number): string {
  const enc = new TextEncoder();
  let out = "";
  let bytes = 0;
  for (const ch of text) {
    const piece = ch === "\\" || ch === "%" || ch === "_" ? `\\${ch}` : ch;
    const n = enc.encode(piece).length;
    if (bytes + n > MAX_LIKE_BYTES - reserve) break;
    bytes += n;
    out += piece;
  }
  return out;
}

/** `col LIKE pattern ESCAPE '\'` for a pattern built with likeText. */
export const likeSql = (col: SQL | AnyColumn, pattern: string): SQL => sql`${col} LIKE ${pattern} ESCAPE '\\'`;
