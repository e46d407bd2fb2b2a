// Hashtags as staff manage them (Mastodon's Api::V1::Admin::TagsController): every tag by id, one tag, and its
// update (display name, trendable, usable), which marks it reviewed, keeps its trend row's `allowed` in step and is
// audit-logged, in one batch. Mastodon's `listable` (shown in the hashtag directory) has no column here: every tag is
// listable, and the parameter is accepted and ignored.
import { eq, sql } from "drizzle-orm";
import { type DB, runBatch } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { tags } from "../../db/schema";
import { historyDays, type TagHistoryDay, type TagRow } from "../../entities/instance/tag";
import { notFound, validationFailed } from "../../lib/http/errors";
import type { Page } from "../../lib/http/pagination";
import { padId } from "../../lib/text/ids";
import { normalizeTag } from "../../lib/text/text";
import { historiesFrom, historyStatement } from "../tags/tags-follow";
import { logStatement, type Moderator } from "./accounts";

export interface AdminTagView {
  tag: TagRow;
  history: TagHistoryDay[];
}

/** A page of every tag, newest first by id (Mastodon pages them by id, 100 by default), with their histories. */
export async function adminTags(db: DB, page: Page): Promise<AdminTagView[]> {
  const rows = await db.select().from(tags).where(cursorWhere(tags.id, page)).orderBy(cursorOrder(tags.id, page)).limit(page.limit);
  const ordered = inPageOrder(rows, page);
  if (!ordered.length) return [];
  const h = historiesFrom(
    await historyStatement(
      db,
      ordered.map((t) => t.id),
    ),
  );
  return ordered.map((tag) => ({ tag, history: h.get(tag.id) ?? historyDays(undefined) }));
}

export async function adminTag(db: DB, id: string): Promise<AdminTagView> {
  const [[tag], hist] = await db.batch([db.select().from(tags).where(eq(tags.id, id)).limit(1), historyStatement(db, [id])]);
  if (!tag) throw notFound();
  return { tag, history: historiesFrom(hist).get(id) ?? historyDays(undefined) };
}

export interface AdminTagUpdate {
  displayName?: string;
  trendable?: boolean;
  usable?: boolean;
}

export async function updateAdminTag(db: DB, actor: Moderator, id: string, u: AdminTagUpdate): Promise<AdminTagView> {
  const { tag } = await adminTag(db, id);
  // The display name may change only how the name is written (Mastodon's Tag validation), never which tag it is.
  const display = u.displayName?.trim();
  if (display !== undefined && display !== "" && normalizeTag(display) !== tag.name) throw validationFailed("Display name didn't match");
  const now = Date.now();
  const set: Partial<TagRow> = { reviewedAt: now, requestedReviewAt: null };
  if (display) set.displayName = display;
  if (u.trendable !== undefined) set.trendable = u.trendable;
  if (u.usable !== undefined) set.usable = u.usable;
  await runBatch(db, [
    db.update(tags).set(set).where(eq(tags.id, id)),
    db.run(sql`UPDATE tag_trends SET allowed = (SELECT trendable AND usable FROM tags WHERE id = ${padId(id)}) WHERE tag_id = ${padId(id)}`),
    logStatement(db, actor, "update", "Tag", id, now),
  ]);
  return adminTag(db, id);
}
