// Featured hashtags on a profile (at most 10), with the owner's own use of each tag, and suggestions drawn from
// the tags the owner used recently.
import { and, desc, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { ownedBy } from "../../db/owned";
import { featuredTags, statuses, statusTags, tags } from "../../db/schema";
import { historyDays, type TagHistoryDay, type TagRow } from "../../entities/instance/tag";
import { notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { ensureTagStatement, historiesFrom, historyStatement } from "../tags/tags-follow";

export const MAX_FEATURED_TAGS = 10;

export interface FeaturedTagView {
  id: string;
  name: string;
  displayName: string;
  statusesCount: number;
  lastStatusAt: number | null;
}

/** The account's featured tags with how often and when it last used each (public and unlisted statuses). */
export async function featuredTagsOf(db: DB, accountId: string): Promise<FeaturedTagView[]> {
  const acc = padId(accountId);
  const rows = await db
    .select({
      id: featuredTags.id,
      name: tags.name,
      displayName: tags.displayName,
      statusesCount: sql<number>`(SELECT count(*) FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id = ${featuredTags.tagId} AND s.account_id = ${acc} AND s.visibility IN ('public','unlisted') AND s.reblog_of_id IS NULL)`,
      lastStatusAt: sql<number | null>`(SELECT max(s.created_at) FROM status_tags st JOIN statuses s ON s.id = st.status_id
        WHERE st.tag_id = ${featuredTags.tagId} AND s.account_id = ${acc} AND s.visibility IN ('public','unlisted') AND s.reblog_of_id IS NULL)`,
    })
    .from(featuredTags)
    .innerJoin(tags, eq(tags.id, featuredTags.tagId))
    .where(eq(featuredTags.accountId, accountId))
    .orderBy(desc(featuredTags.id));
  return rows.map((r) => ({ ...r, statusesCount: Number(r.statusesCount ?? 0), lastStatusAt: r.lastStatusAt == null ? null : Number(r.lastStatusAt) }));
}

/**
 * Features a tag. With `idempotent` (POST /tags/:name/feature) featuring it again is a no-op; POST /featured_tags
 * refuses a duplicate like Mastodon's uniqueness validation.
 */
export async function featureTag(db: DB, accountId: string, raw: string, normalized: string, idempotent: boolean): Promise<FeaturedTagView> {
  const acc = padId(accountId);
  const byName = sql`(SELECT id FROM tags WHERE name = ${normalized})`;
  const now = Date.now();
  const [, , ins] = await db.batch([
    ensureTagStatement(db, raw, normalized),
    db
      .select({ id: featuredTags.id })
      .from(featuredTags)
      .where(and(eq(featuredTags.accountId, accountId), inArray(featuredTags.tagId, byName))),
    db.run(sql`INSERT OR IGNORE INTO featured_tags (id, account_id, tag_id, created_at)
      SELECT ${padId(snowflake(now))}, ${acc}, ${byName}, ${now}
      WHERE (SELECT count(*) FROM featured_tags WHERE account_id = ${acc}) < ${MAX_FEATURED_TAGS}`),
  ]);
  const all = await featuredTagsOf(db, accountId);
  const mine = all.find((f) => f.name === normalized);
  if (!ins.meta.changes) {
    if (!mine) throw validationFailed(`You have reached the maximum of ${MAX_FEATURED_TAGS} featured hashtags`);
    if (!idempotent) throw validationFailed("Tag has already been taken");
  }
  return mine!;
}

export async function unfeatureTag(db: DB, accountId: string, normalized: string): Promise<void> {
  await db
    .delete(featuredTags)
    .where(and(eq(featuredTags.accountId, accountId), inArray(featuredTags.tagId, sql`(SELECT id FROM tags WHERE name = ${normalized})`)));
}

export async function deleteFeaturedTag(db: DB, accountId: string, id: string): Promise<void> {
  const res = await db.delete(featuredTags).where(ownedBy(featuredTags, id, accountId));
  if (!res.meta.changes) throw notFound();
}

/** Up to 10 tags the account used lately and has not featured yet. */
export async function featuredTagSuggestions(db: DB, accountId: string): Promise<{ tag: TagRow; history: TagHistoryDay[] }[]> {
  const recent = db
    .select({ tagId: statusTags.tagId })
    .from(statusTags)
    .innerJoin(statuses, eq(statuses.id, statusTags.statusId))
    .where(and(eq(statuses.accountId, accountId), sql`${statuses.reblogOfId} IS NULL`))
    .orderBy(desc(statusTags.statusId))
    .limit(200);
  const rows = await db
    .select()
    .from(tags)
    .where(
      and(inArray(tags.id, recent), notInArray(tags.id, db.select({ id: featuredTags.tagId }).from(featuredTags).where(eq(featuredTags.accountId, accountId)))),
    )
    .orderBy(desc(tags.lastStatusAt))
    .limit(10);
  if (!rows.length) return [];
  const h = historiesFrom(
    await historyStatement(
      db,
      rows.map((t) => t.id),
    ),
  );
  return rows.map((t) => ({ tag: t, history: h.get(t.id) ?? historyDays(undefined) }));
}
