// The inserts of whole rows that the hot paths write (an incoming Create, a post, a favourite, an edit), their text
// built once per isolate (db/frozen.ts, frozenInsert): `insertStatus(db, row)` is a statement to await or batch.
import type { DB } from "./client";
import { frozenInsert } from "./frozen";
import { conversations, favourites, mediaAttachments, polls, statusEdits, statuses } from "./schema";

export const insertStatus = frozenInsert(statuses);
export const insertConversation = frozenInsert(conversations);
export const insertFavourite = frozenInsert(favourites);
export const insertStatusEdit = frozenInsert(statusEdits);
export const insertMedia = frozenInsert(mediaAttachments);
export const insertPoll = frozenInsert(polls);

/** The status as first written, kept as the first entry of its edit history when it is edited the first time. */
export function originalVersionStatement(db: DB, s: typeof statuses.$inferSelect, pollOptions: string[] | null, id: string) {
  return insertStatusEdit(db, {
    id,
    statusId: s.id,
    accountId: s.accountId,
    text: s.text,
    content: s.content,
    spoilerText: s.spoilerText,
    sensitive: s.sensitive,
    mediaIds: s.mediaIds ?? [],
    pollOptions,
    createdAt: s.createdAt,
  });
}
