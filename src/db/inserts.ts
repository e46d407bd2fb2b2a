// The inserts of whole rows that the hot paths write (an incoming Create, a post, a favourite, an edit), their text
// built once per isolate (db/frozen.ts, frozenInsert): `insertStatus(db, row)` is a statement to await or batch.
import { frozenInsert } from "./frozen";
import { conversations, favourites, mediaAttachments, polls, statusEdits, statuses } from "./schema";

export const insertStatus = frozenInsert(statuses);
export const insertConversation = frozenInsert(conversations);
export const insertFavourite = frozenInsert(favourites);
export const insertStatusEdit = frozenInsert(statusEdits);
export const insertMedia = frozenInsert(mediaAttachments);
export const insertPoll = frozenInsert(polls);
