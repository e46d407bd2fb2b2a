// Hashtags: find-or-create by normalised name (lib/text normalizeTag: NFKC, lower case, ASCII folding, security
// A19), as statements for a caller's batch or as one round trip of their own.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { tags } from "../../db/schema";
import { padId, snowflake } from "../../lib/text/ids";
import { extractEntities, normalizeTag, type Entity } from "../../lib/text/text";
import { valueList } from "../../db/id-list";

export const MAX_TAG_LENGTH = 100;
/** Distinct tags kept per status; the rest stay links in the text but are not indexed. */
export const MAX_TAGS_PER_STATUS = 20;

export type TagRow = typeof tags.$inferSelect;

export interface TagName {
  name: string; // normalised
  display: string; // as first written
}

/** Distinct normalised hashtags of a text (or of already extracted entities), capped. */
export function hashtagsOf(source: string | Entity[]): TagName[] {
  const entities = typeof source === "string" ? extractEntities(source) : source;
  const seen = new Map<string, TagName>();
  for (const e of entities) {
    if (e.kind !== "hashtag") continue;
    const name = normalizeTag(e.name);
    if (!name || name.length > MAX_TAG_LENGTH || seen.has(name)) continue;
    seen.set(name, { name, display: e.name.normalize("NFKC").slice(0, MAX_TAG_LENGTH) });
    if (seen.size >= MAX_TAGS_PER_STATUS) break;
  }
  return [...seen.values()];
}

/** INSERT OR IGNORE the tags (one statement, one JSON parameter) and stamp their last use. */
export function upsertTagsStatements(db: DB, list: TagName[], now = Date.now()) {
  const rows = JSON.stringify(list.map((t) => [padId(snowflake(now)), t.name, t.display]));
  const names = JSON.stringify(list.map((t) => t.name));
  return [
    db.run(sql`INSERT OR IGNORE INTO tags (id, name, display_name, usable, trendable, created_at)
      SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), 1, 1, ${now}
      FROM json_each(${rows}) j`),
    db.run(sql`UPDATE tags SET last_status_at = ${now} WHERE name IN (SELECT value FROM json_each(${names}))`),
  ] as const;
}

/** Links a status to tags by name (after upsertTagsStatements in the same batch). */
export function linkStatusTagsStatement(db: DB, statusId: string, names: string[]) {
  return db.run(sql`INSERT OR IGNORE INTO status_tags (status_id, tag_id)
    SELECT ${padId(statusId)}, id FROM tags WHERE name IN ${valueList(names)}`);
}

/** A status's hashtags: the tags made when new, then linked to the status (nothing when there are none). */
export function statusTagsStatements(db: DB, statusId: string, list: TagName[], now = Date.now()) {
  if (!list.length) return [];
  return [
    ...upsertTagsStatements(db, list, now),
    linkStatusTagsStatement(
      db,
      statusId,
      list.map((t) => t.name),
    ),
  ];
}
