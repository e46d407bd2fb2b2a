// The effects of an action: what must happen after its write has committed and must not be lost (fan-out to home
// feeds, deliveries to other servers, streaming events, Web Push). Services record them on an `Effects` collector
// (./collector.ts); one helper sends them (./send.ts); one switch runs them (./run.ts). Effects carry ids, never
// bodies (a Queue message is at most 128 KB), and running one twice changes nothing twice.

export type Effect =
  // cursor: the last follows.id handled; a fan-out over many followers continues in further effects.
  | { type: "fanout"; statusId: string; cursor?: string }
  // A fan-out chunk committed with the write that made the status (an incoming Create): what it reached, to announce on
  // the streams, and the cursor of the next chunk, if any.
  | { type: "fanned_out"; statusId: string; delivered: FanOutDelivered }
  | { type: "unfanout"; statusId: string; accountId: string; reblogOfId?: string | null }
  | { type: "merge_feed"; accountId: string; targetAccountId: string }
  | { type: "unmerge_feed"; accountId: string; targetAccountId: string }
  // An account was added to a list: its recent statuses go into the list's feed
  | { type: "merge_list"; listId: string; accountId: string }
  | { type: "regenerate_feed"; accountId: string }
  // A notification row was written (or would have been: a row the batch skipped is ignored): stream and push it.
  | { type: "notify"; notificationId: string }
  // One Web Push message for one subscription (src/push); `attempt` counts its retries.
  | { type: "push"; subscriptionId: string; notificationId: string; attempt?: number }
  // A status (and its boosts) left these feeds: tell open streams (`info` says which shared streams had it).
  | {
      type: "stream_delete";
      statusId: string;
      info: { visibility: string; local: boolean; reblog: boolean; tags: string[] } | null;
      home: { accountId: string; statusId: string }[];
      lists: { listId: string; accountId: string; statusId: string }[];
    }
  // Blocks, mutes or domain blocks of these accounts changed: their open streams re-read them.
  | { type: "relations_changed"; accountIds: string[] }
  // A status changed in place (edit, poll counts): tell open streams.
  | { type: "status_updated"; statusId: string }
  // federation: a verified inbound activity stored in inbox_items, processed off the request path
  | { type: "inbox"; itemId: string; origin: string }
  // federation: an outbound effect of a local action, built and delivered after the response (src/federation/outbound/outbound.ts)
  | { type: "federate"; origin: string; action: FederateAction }
  // federation: refresh a remote account's pinned statuses from its featured collection (src/federation/remote/featured-collection.ts)
  | { type: "fetch_featured"; accountId: string; origin: string }
  // A remote collection's items whose consent was not proven within the activity's fetch budget
  // (src/federation/remote/featured-collections.ts verifyRemoteCollection).
  | { type: "collection_verify"; collectionId: string; origin: string }
  // An account's content filters changed (one per API call): streaming's filters_changed (src/services/accounts/filters.ts)
  | { type: "filters_changed"; accountId: string }
  // A token was revoked (tokenId) or the account may no longer sign in (tokenId null): close its open streams now
  | { type: "disconnect_streams"; accountId: string; tokenId: string | null }
  // An announcement was published or edited, lost a reaction or gained one, or went: every open user stream hears it
  | { type: "announcement"; event: "announcement" | "announcement.reaction" | "announcement.delete"; announcementId: string; name?: string }
  // A scheduled status the cron claimed: publish it through postStatus (src/services/statuses/publish-scheduled.ts)
  | { type: "publish_scheduled"; scheduledStatusId: string }
  // R2 objects whose media rows are gone (a status deleted with its media, src/services/statuses/delete-status.ts): remove them
  | { type: "delete_media"; keys: string[] }
  // A large upload through /api/v2/media, stored as it came (processing = 1): make its original, preview and blurhash
  // (src/services/statuses/media-processing.ts); run after the 202 in the same invocation, retried through JOBS
  | { type: "process_media"; mediaId: string }
  // A remote status was stored with attachments naming another server's files: fetch them into R2
  // (src/services/remote-media/attachments.ts)
  | { type: "cache_media"; mediaIds: string[] }
  // remote accounts' avatars and headers into R2 (src/services/remote-media/pictures.ts)
  | { type: "cache_pictures"; accountIds: string[] }
  | { type: "cache_emojis"; emojiIds: string[] }
  // A new or re-edited status may link a page: fetch its preview card (src/services/statuses/preview-cards.ts)
  | { type: "fetch_card"; statusId: string }
  // An instance domain block was created, changed or lifted: silence or suspend its domain's accounts and keep their
  // reject_media mark in step, one bounded round per effect (src/services/admin/blocks/domain-blocks.ts applyDomainBlockRound;
  // a round records the next while accounts are left). `domain`: the block's domain, for a block that may be gone
  | { type: "domain_block_apply"; domainBlockId: string; domain?: string }
  // An account's data is being deleted (src/services/accounts/delete-account.ts): the next bounded chunk of it
  | { type: "delete_account"; accountId: string }
  // Account data import and export (src/services/data/imports.ts, export-archive.ts): the next bounded round of each
  | { type: "import_rows"; importId: string; origin: string }
  | { type: "export_archive"; backupId: string; origin: string }
  // An archive import's next round (src/services/data/import-archive-rounds.ts)
  | { type: "import_archive"; importId: string; origin: string }
  // An annual report being generated (src/services/accounts/annual-report-rounds.ts): its next bounded round
  | { type: "annual_report"; accountId: string; year: number }
  // What a context request's backfill could not fetch within its budget (src/federation/remote/backfill.ts)
  | { type: "backfill_thread"; statusId: string }
  // One mail to one recipient through the EMAIL binding (src/mail/run.ts); retried by the runner, at most
  // MAX_EFFECT_ATTEMPTS runs, then kept in dead_letters
  // (`origin`: scheme://host of the instance, for the mail's links, as a federate effect carries it)
  | { type: "mail"; origin: string; mail: MailJob }
  // "Forgot your password?" for an address (src/mail/run.ts runPasswordReset): looked up, and mailed a new link if it is an
  // account's, in the job, so the page's answer costs the same whether the address exists or not
  | { type: "password_reset"; origin: string; email: string }
  // "Didn't receive confirmation instructions?" (/auth/confirmation/new): the same, for an account awaiting confirmation
  | { type: "confirmation_resend"; origin: string; email: string }
  // A staff notice (Mastodon's AdminMailer): one `mail` effect for each staff member who may act on it and wants it
  | { type: "mail_staff"; origin: string; notice: StaffNotice };

/**
 * What one mail says, to whom (`userId`: the recipient's user). A link's token is stored hashed only, so the mail job
 * gets it here, sealed under SECRET_KEY_BASE (`sealed`); `linkId` names its row: a link used or replaced before the
 * job runs is not mailed.
 */
export type MailJob =
  | { kind: "confirm" | "reconfirm" | "reset_password"; userId: string; linkId: string; sealed: string }
  | { kind: "admin_report"; userId: string; reportId: string }
  | { kind: "admin_pending_account"; userId: string; accountId: string }
  | { kind: "admin_trends"; userId: string; tags: number; statuses: number; links: number };

/** A staff notice before its recipients are known (src/mail/staff-notices.ts). */
export type StaffNotice =
  | { kind: "report"; reportId: string }
  | { kind: "pending_account"; accountId: string }
  | { kind: "trends"; tags: number; statuses: number; links: number };

/** A notification row was written (or skipped by its statement's own conditions): stream and push it. */
export type NotifyEffect = Extract<Effect, { type: "notify" }>;

/**
 * One JOBS message: a single effect, or all the effects of one action packed together (one queue operation) with the
 * origin (scheme://host) of the request that caused them, which rendering needs when LOCAL_DOMAIN is not set.
 * `attempt`: how many times these effects already failed (./retry.ts); absent on a first run. `journal`: the rows of
 * `pending_effects` that keep these effects since their write's batch (./commit.ts), which the consumer claims before
 * it runs the message and deletes after; `token`: which delivery this is ("o", the request's own send, when absent;
 * "r<time>" for a cron's send), ./journal.ts.
 * `extra`: effects recorded after that batch (they depend on what it returned), which no journal row keeps: they travel
 * in the journal's message to save a queue operation, and run whether or not this delivery holds the row.
 */
export type JobMessage =
  | Effect
  | { type: "effects"; origin?: string; effects: Effect[]; attempt?: number; journal?: string[]; token?: string; extra?: Effect[] };

/** What a local action sends to other servers; ids only, the activity is built when the job runs. */
export type FederateAction =
  | { kind: "create"; statusId: string }
  | { kind: "update_status"; statusId: string }
  // reachedInboxes: servers that boosted, favourited or replied (read before the rows went)
  | { kind: "delete_status"; statusId: string; accountId: string; uri: string; visibility: string; mentionUris: string[]; reachedInboxes?: string[] }
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
  // inboxes: read before the account's follows were deleted (src/services/accounts/delete-account.ts); else read when run
  | { kind: "delete_actor"; accountId: string; inboxes?: string[] }
  // A local voter's votes on a remote poll: one Create{Note} per choice to the poll's author
  | { kind: "vote"; accountId: string; pollId: string }
  // A local poll got votes: Update{Question} with the new counts, sent after POLL_UPDATE_DELAY_SECONDS (`delayed`
  // once the job has waited), to voters, boosters, mentioned accounts and followers
  /**
   * The Question with its counts, to followers and remote voters: after votes (`delayed` once it waited), or once the
   * poll ended (`final`: at once, with the final counts, hidden totals included).
   */
  | { kind: "update_poll"; statusId: string; delayed?: boolean; final?: boolean }
  // Quote posts (src/federation/outbound/quote-outbound.ts): our QuoteRequest for a quote of a remote status; our answer to
  // theirs (Accept with a QuoteAuthorization, or Reject: no row is kept, so the ids travel); the Delete of a
  // QuoteAuthorization we granted, when the quoted author revokes it
  | { kind: "quote_request"; quoteId: string }
  | { kind: "accept_quote_request"; quoteId: string }
  | { kind: "reject_quote_request"; accountId: string; requesterId: string; activityUri: string; quotedUri: string; instrumentUri: string }
  | { kind: "revoke_quote"; quoteId: string }
  // Collections (FEP-7aa9, src/federation/outbound/collections-outbound.ts): a local collection created, updated or
  // deleted (`alsoTo`: the remote accounts it featured), an item added or removed, our FeatureRequest for a remote
  // account, our answer to theirs for a local account (`activityUri`: their request; `itemId` of the item accepted, or
  // none when rejected), and a local account's revocation of its place in a remote collection.
  | { kind: "collection_add"; collectionId: string }
  | { kind: "collection_update"; collectionId: string }
  | { kind: "collection_remove"; accountId: string; collectionId: string; alsoTo: string[] }
  | { kind: "collection_item_add"; itemId: string }
  | { kind: "collection_item_remove"; collectionId: string; itemId: string; accountId: string }
  | { kind: "feature_request"; itemId: string }
  | { kind: "feature_answer"; accountId: string; requesterId: string; activityUri: string; itemId: string | null }
  | { kind: "feature_revoke"; itemId: string }
  // Relays (src/federation/outbound/relays.ts): the instance actor's Follow of as:Public to a relay's inbox, and its Undo
  | { kind: "relay_follow"; relayId: string; followUri: string }
  | { kind: "relay_undo"; inboxUrl: string; followUri: string }
  // Account migration (src/services/accounts/account-migration.ts): the Move of a local account to its followers' servers, and
  // one bounded round of moving the local followers of an account that moved (local or remote) to its new account
  | { kind: "move"; accountId: string; targetAccountId: string; migrationId: string }
  | { kind: "move_followers"; sourceAccountId: string; targetAccountId: string; cursor?: string };

/** What a fan-out chunk reached (src/timelines/fanout.ts). */
export interface FanOutDelivered {
  /** Cursor of the next chunk of followers, if any. */
  next?: string;
  /** Accounts whose home feed received the status in this chunk (author, followers, mentioned, tag followers). */
  homeAccountIds: string[];
  /** Lists whose feed received it, with their owners (first chunk only: lists are not chunked). */
  lists: { listId: string; accountId: string }[];
  /** The first chunk: the one after which public and hashtag streams hear of the status (once per status). */
  shared: boolean;
  /** Account conversations a direct status joined (first chunk only): their owners' `direct` streams hear of it. */
  conversations: { id: string; accountId: string }[];
}
