// A hashtag's uses per UTC day over the last 7 days, as the Tag entity's `history` shows them: read for a page of
// tags in one statement (trends, followed and featured tags, the admin's tags).
import { and, eq, gte, inArray, sql, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { statuses, statusTags } from "../../db/schema";
import { historyDays, type TagHistoryDay } from "../../entities/instance/tag";
import { snowflakeFloor } from "../../lib/text/ids";

const DAY_MS = 86_400_000;

/** Statement: uses per UTC day over the last 7 days for these tags (public and unlisted statuses). */
export function historyStatement(db: DB, tagIds: string[] | SQL) {
  const since = Math.floor(Date.now() / DAY_MS) * DAY_MS - 6 * DAY_MS;
  const ids = Array.isArray(tagIds) ? idList(tagIds) : tagIds;
  return db
    .select({
      tagId: statusTags.tagId,
      day: sql<number>`(${statuses.createdAt} / ${sql.raw(String(DAY_MS))}) * ${sql.raw(String(DAY_MS))}`,
      uses: sql<number>`count(*)`,
      accounts: sql<number>`count(DISTINCT ${statuses.accountId})`,
    })
    .from(statusTags)
    .innerJoin(statuses, eq(statuses.id, statusTags.statusId))
    .where(
      and(
        inArray(statusTags.tagId, ids),
        gte(statusTags.statusId, snowflakeFloor(since)),
        sql`${statuses.visibility} IN ('public','unlisted')`,
        sql`${statuses.reblogOfId} IS NULL`,
      ),
    )
    .groupBy(statusTags.tagId, sql`2`);
}

export function historiesFrom(rows: { tagId: string; day: number; uses: number; accounts: number }[]): Map<string, TagHistoryDay[]> {
  const per = new Map<string, Map<number, { uses: number; accounts: number }>>();
  for (const r of rows) {
    let m = per.get(r.tagId);
    if (!m) {
      m = new Map();
      per.set(r.tagId, m);
    }
    m.set(Number(r.day), { uses: Number(r.uses), accounts: Number(r.accounts) });
  }
  const out = new Map<string, TagHistoryDay[]>();
  for (const [id, m] of per) out.set(id, historyDays(m));
  return out;
}
