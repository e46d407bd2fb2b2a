// Work that must happen after a response and must not be lost: typed messages on the JOBS queue.
// Messages carry ids, never bodies (a Queue message is at most 128 KB).

export type JobMessage =
  // cursor: the last follows.id handled; a fan-out over many followers continues in further messages.
  | { type: "fanout"; statusId: string; cursor?: string }
  | { type: "unfanout"; statusId: string; accountId: string; reblogOfId?: string | null }
  | { type: "merge_feed"; accountId: string; targetAccountId: string }
  | { type: "unmerge_feed"; accountId: string; targetAccountId: string }
  | { type: "regenerate_feed"; accountId: string }
  // federation: a verified inbound activity stored in inbox_items, processed off the request path
  | { type: "inbox"; itemId: string; origin: string };

export type JobType = JobMessage["type"];
