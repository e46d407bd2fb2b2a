// Hashtags as things a user acts on: viewing one, following, featuring on the profile (4.4 /feature), and the
// 7-day usage history clients draw. Tag rows are created on demand with INSERT OR IGNORE on the normalised name.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { featuredTags, tagFollows, tags } from "../../db/schema";
import { historyDays, type TagHistoryDay, type TagRow } from "../../entities/instance/tag";
import { validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { normalizeTag } from "../../lib/text/text";
import { historiesFrom, historyStatement } from "../../queries/instance/tag-history";

export { historiesFrom, historyStatement } from "../../queries/instance/tag-history";

export const MAX_TAG_LENGTH = 100;

/**
 * A hashtag name as a user may type it (Mastodon's HASHTAG_NAME_RE): word characters, at least one that is not a
 * digit. Returns the normalised name, or null.
 */
export function validTagName(raw: string): string | null {
  const name = raw.replace(/^#/, "");
  if (!name || name.length > MAX_TAG_LENGTH) return null;
  if (!/^[\p{L}\p{N}\p{M}_·]+$/u.test(name) || !/[\p{L}\p{M}_·]/u.test(name)) return null;
  const n = normalizeTag(name);
  return n || null;
}

/** Statement: create the tag if missing (display name is the first spelling seen). */
export function ensureTagStatement(db: DB, raw: string, normalized: string) {
  const now = Date.now();
  return db
    .insert(tags)
    .values({ id: snowflake(now), name: normalized, displayName: raw.replace(/^#/, ""), createdAt: now })
    .onConflictDoNothing();
}

export interface TagView {
  tag: TagRow;
  history: TagHistoryDay[];
  following: boolean;
  featuring: boolean;
}

/** A tag with history and the viewer's state, in one round trip; null when no such tag exists yet. */
export async function viewTag(db: DB, normalized: string, viewerId: string | null): Promise<TagView | null> {
  const byName = sql`(SELECT ${tags.id} FROM ${tags} WHERE ${tags.name} = ${normalized})`;
  const v = viewerId ?? "0";
  const [t, h, f, ft] = await db.batch([
    db.select().from(tags).where(eq(tags.name, normalized)).limit(1),
    historyStatement(db, byName),
    db
      .select({ id: tagFollows.id })
      .from(tagFollows)
      .where(and(eq(tagFollows.accountId, v), inArray(tagFollows.tagId, byName)))
      .limit(1),
    db
      .select({ id: featuredTags.id })
      .from(featuredTags)
      .where(and(eq(featuredTags.accountId, v), inArray(featuredTags.tagId, byName)))
      .limit(1),
  ]);
  if (!t[0]) return null;
  return { tag: t[0], history: historiesFrom(h).get(t[0].id) ?? historyDays(undefined), following: f.length > 0, featuring: ft.length > 0 };
}

/** Follows a tag (creating it if needed); repeating is a no-op. */
export async function followTag(db: DB, accountId: string, raw: string, normalized: string): Promise<TagView> {
  const byName = sql`(SELECT ${tags.id} FROM ${tags} WHERE ${tags.name} = ${normalized})`;
  const now = Date.now();
  await db.batch([
    ensureTagStatement(db, raw, normalized),
    db.run(sql`INSERT OR IGNORE INTO tag_follows (id, account_id, tag_id, created_at) SELECT ${padId(snowflake(now))}, ${padId(accountId)}, ${byName}, ${now}`),
  ]);
  return (await viewTag(db, normalized, accountId))!;
}

export async function unfollowTag(db: DB, accountId: string, raw: string, normalized: string): Promise<TagView> {
  const byName = sql`(SELECT ${tags.id} FROM ${tags} WHERE ${tags.name} = ${normalized})`;
  await db.batch([
    ensureTagStatement(db, raw, normalized),
    db.delete(tagFollows).where(and(eq(tagFollows.accountId, accountId), inArray(tagFollows.tagId, byName))),
  ]);
  return (await viewTag(db, normalized, accountId))!;
}

export interface FollowedTag {
  cursor: string; // tag_follows.id
  tag: TagRow;
  history: TagHistoryDay[];
}

/** The viewer's followed tags, newest follow first, paged by tag_follows ids. */
export async function followedTags(db: DB, accountId: string, page: Page): Promise<FollowedTag[]> {
  const rows = await db
    .select({ cursor: sql<string>`${tagFollows.id}`.mapWith(tagFollows.id).as("cursor"), tag: tags })
    .from(tagFollows)
    .innerJoin(tags, eq(tags.id, tagFollows.tagId))
    .where(and(eq(tagFollows.accountId, accountId), cursorWhere(tagFollows.id, page)))
    .orderBy(cursorOrder(tagFollows.id, page))
    .limit(page.limit);
  inPageOrder(rows, page);
  if (!rows.length) return [];
  const h = historiesFrom(
    await historyStatement(
      db,
      rows.map((r) => r.tag.id),
    ),
  );
  return rows.map((r) => ({ cursor: r.cursor, tag: r.tag, history: h.get(r.tag.id) ?? historyDays(undefined) }));
}

/** Tags looked at per result wanted (limit + offset), in name order from the prefix, at most TAG_SCAN_MAX. */
const TAG_SCAN_PER_RESULT = 5;
const TAG_SCAN_MAX = 2_000;

/**
 * Tags by name prefix (search), the exact name first, then most recently used, with history in the same round trip.
 * Names are stored normalised (lowercase, without diacritics) and `prefix` is too, so the prefix is a range of the
 * name index (binary order: every name that starts with it sorts from it up to it followed by U+10FFFF), and the
 * candidates sorted are that range's first TAG_SCAN_PER_RESULT × (limit + offset), the exact name among them. A
 * case-insensitive LIKE could use no index: every tag stored, on each search anyone may make.
 */
export async function searchTags(db: DB, prefix: string, limit: number, offset: number): Promise<{ tag: TagRow; history: TagHistoryDay[] }[]> {
  const cap = Math.min(TAG_SCAN_MAX, TAG_SCAN_PER_RESULT * (limit + offset));
  const match = sql`${tags.id} IN (SELECT tn.id FROM tags tn WHERE tn.name >= ${prefix} AND tn.name < ${`${prefix}\u{10FFFF}`}
    ORDER BY tn.name LIMIT ${cap}) AND ${tags.usable} = 1`;
  const matchIds = sql`(SELECT ${tags.id} FROM ${tags} WHERE ${match} ORDER BY (${tags.name} = ${prefix}) DESC, ${tags.lastStatusAt} DESC NULLS LAST, ${tags.name} LIMIT ${limit} OFFSET ${offset})`;
  const [rows, h] = await db.batch([
    db
      .select()
      .from(tags)
      .where(match)
      .orderBy(sql`(${tags.name} = ${prefix}) DESC`, sql`${tags.lastStatusAt} DESC NULLS LAST`, asc(tags.name))
      .limit(limit)
      .offset(offset),
    historyStatement(db, matchIds),
  ]);
  const hist = historiesFrom(h);
  return rows.map((t) => ({ tag: t, history: hist.get(t.id) ?? historyDays(undefined) }));
}

export function requireTagName(raw: string): string {
  const n = validTagName(raw);
  if (!n) throw validationFailed("Name is invalid");
  return n;
}
