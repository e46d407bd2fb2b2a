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
  | { type: "inbox"; itemId: string; origin: string }
  // federation: an outbound effect of a local action, built and delivered after the response (src/federation/outbound.ts)
  | { type: "federate"; origin: string; action: FederateAction }
  // federation: refresh a remote account's pinned statuses from its featured collection (src/federation/featured-collection.ts)
  | { type: "fetch_featured"; accountId: string; origin: string };

/** What a local action sends to other servers; ids only, the activity is built when the job runs. */
export type FederateAction =
  | { kind: "create"; statusId: string }
  | { kind: "update_status"; statusId: string }
  | { kind: "delete_status"; statusId: string; accountId: string; uri: string; visibility: string; mentionUris: string[] }
  | { kind: "announce"; reblogId: string }
  | { kind: "undo_announce"; accountId: string; reblogUri: string; objectUri: string; objectAuthorId: string }
  | { kind: "like"; accountId: string; statusId: string; favouriteId: string }
  | { kind: "undo_like"; accountId: string; statusId: string; favouriteId: string }
  | { kind: "follow"; accountId: string; targetAccountId: string; followUri: string }
  | { kind: "undo_follow"; accountId: string; targetAccountId: string; followUri: string }
  | { kind: "accept_follow"; accountId: string; followerId: string; followUri: string }
  | { kind: "reject_follow"; accountId: string; followerId: string; followUri: string }
  | { kind: "block"; accountId: string; targetAccountId: string; blockUri: string }
  | { kind: "undo_block"; accountId: string; targetAccountId: string; blockUri: string }
  | { kind: "update_actor"; accountId: string }
  | { kind: "pin"; accountId: string; statusId: string; remove: boolean }
  | { kind: "flag"; reportId: string }
  | { kind: "delete_actor"; accountId: string };

export type JobType = JobMessage["type"];
