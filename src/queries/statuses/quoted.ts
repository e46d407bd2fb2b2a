// The status a page row quotes, read with the page so the quoted status joins the page's one bundle read.
import { type SQL, sql } from "drizzle-orm";

/**
 * The id of the status that `statusId` (an SQL expression naming the row's status, or the status it boosts) quotes: a
 * probe of quotes_status that reads no row when there is none. `statusId` must name its table: a bare `id` inside
 * this subquery would be quotes' own.
 */
export function quotedStatusIdOf(statusId: SQL): SQL {
  return sql`(SELECT qq.quoted_status_id FROM quotes qq WHERE qq.status_id = ${statusId})`;
}
