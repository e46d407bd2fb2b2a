// Keyset pagination, Mastodon's rule in one place: max_id → older than; min_id → immediately newer (read oldest
// first, returned newest first); since_id → newer, newest first; min_id wins over since_id. Cursors are entity ids or
// internal row ids; columns of the `id()` type pad them on the way in.
import { and, asc, desc, gt, lt, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { padId } from "../lib/text/ids";
import type { Page } from "../lib/http/pagination";

export function cursorWhere(col: AnyColumn, page: Page): SQL | undefined {
  const parts: SQL[] = [];
  if (page.maxId) parts.push(lt(col, page.maxId));
  if (page.minId) parts.push(gt(col, page.minId));
  else if (page.sinceId) parts.push(gt(col, page.sinceId));
  return parts.length ? and(...parts) : undefined;
}

/** min_id scans upwards from the cursor; the page is still returned newest first (see inPageOrder). */
export const cursorOrder = (col: AnyColumn, page: Page) => (page.minId ? asc(col) : desc(col));

export function inPageOrder<T>(rows: T[], page: Page): T[] {
  return page.minId ? rows.reverse() : rows;
}

/** The same rule as the page's two exclusive bounds, padded ids (null: none): above it, below it. */
export function cursorBounds(page: Page): { above: string | null; below: string | null } {
  const above = page.minId ?? page.sinceId;
  return { above: above ? padId(above) : null, below: page.maxId ? padId(page.maxId) : null };
}

/** The same rule for a raw SQL column expression (an aliased padded-id column in a hand-written query). */
export function cursorSql(col: SQL, page: Page): { cond: SQL; ascending: boolean; dir: SQL } {
  const { above, below } = cursorBounds(page);
  const parts: SQL[] = [];
  if (below) parts.push(sql`${col} < ${below}`);
  if (above) parts.push(sql`${col} > ${above}`);
  const ascending = !!page.minId;
  return { cond: parts.length ? sql` AND ${sql.join(parts, sql` AND `)}` : sql``, ascending, dir: ascending ? sql.raw("ASC") : sql.raw("DESC") };
}
