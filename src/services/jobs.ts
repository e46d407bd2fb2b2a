// Work that must happen after a response and must not be lost: typed messages on the JOBS queue.
// Messages carry ids, never bodies (a Queue message is at most 128 KB).

export type JobMessage =
  | { type: "fanout"; statusId: string }
  | { type: "unfanout"; statusId: string; accountId: string; reblogOfId?: string | null }
  | { type: "merge_feed"; accountId: string; targetAccountId: string }
  | { type: "unmerge_feed"; accountId: string; targetAccountId: string }
  | { type: "regenerate_feed"; accountId: string };

export type JobType = JobMessage["type"];
