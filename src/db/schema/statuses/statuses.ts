import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

export type Visibility = "public" | "unlisted" | "private" | "direct";

/** Local and remote statuses; a reblog is a status row with reblog_of_id set and no content. */
export const statuses = lazyTable(() =>
  sqliteTable(
    "statuses",
    {
      id: id("id").primaryKey(),
      uri: text("uri").notNull(),
      url: text("url"),
      accountId: id("account_id").notNull(),
      local: bool("local").notNull(),
      inReplyToId: id("in_reply_to_id"),
      inReplyToAccountId: id("in_reply_to_account_id"),
      reblogOfId: id("reblog_of_id"),
      conversationId: id("conversation_id"),
      text: text("text").notNull().default(""), // source text (local) for edit/redraft
      content: text("content").notNull().default(""), // sanitised HTML
      spoilerText: text("spoiler_text").notNull().default(""),
      sensitive: bool("sensitive").notNull().default(false),
      visibility: text("visibility").$type<Visibility>().notNull(),
      language: text("language"),
      applicationId: id("application_id"),
      pollId: id("poll_id"),
      mediaIds: json<string[]>()("media_ids"), // ordered attachment ids
      /** The `:shortcode:`s in the text and content warning (services/statuses/custom-emojis.ts); null when none. */
      emojiShortcodes: json<string[] | null>()("emoji_shortcodes"),
      repliesCount: integer("replies_count").notNull().default(0),
      reblogsCount: integer("reblogs_count").notNull().default(0),
      favouritesCount: integer("favourites_count").notNull().default(0),
      // Quote posts (migrations/0022_quotes.sql): Mastodon's policy bitmap and the count of accepted quotes.
      quoteApprovalPolicy: integer("quote_approval_policy").notNull().default(0),
      quotesCount: integer("quotes_count").notNull().default(0),
      createdAt: ms("created_at").notNull(),
      editedAt: ms("edited_at"),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [
      uniqueIndex("statuses_uri").on(t.uri),
      index("statuses_account_id").on(t.accountId, t.id),
      // Boosts, replies and conversations only: no entry (no D1 row written) for a NULL (migrations/0033, 0035).
      index("statuses_reblog_of").on(t.reblogOfId, t.accountId).where(sql`reblog_of_id IS NOT NULL`),
      index("statuses_in_reply_to").on(t.inReplyToId).where(sql`in_reply_to_id IS NOT NULL`),
      index("statuses_conversation").on(t.conversationId).where(sql`conversation_id IS NOT NULL`),
      index("statuses_public").on(t.visibility, t.local, t.id),
      // Remote statuses by a web URL other than their uri (search by link, migrations/0038).
      index("statuses_url").on(t.url).where(sql`url IS NOT NULL AND url <> uri AND local = 0`),
      // Boosts by id (the trends refresh's windows, migrations/0031_cron_indexes.sql).
      index("statuses_boosts").on(t.id, t.reblogOfId).where(sql`reblog_of_id IS NOT NULL`),
    ],
  ),
);

export const statusEdits = lazyTable(() =>
  sqliteTable(
    "status_edits",
    {
      id: id("id").primaryKey(),
      statusId: id("status_id").notNull(),
      accountId: id("account_id").notNull(),
      text: text("text").notNull(),
      content: text("content").notNull(),
      spoilerText: text("spoiler_text").notNull().default(""),
      sensitive: bool("sensitive").notNull().default(false),
      mediaIds: json<string[]>()("media_ids"),
      pollOptions: json<string[] | null>()("poll_options"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("status_edits_status").on(t.statusId, t.id)],
  ),
);

export const conversations = lazyTable(() =>
  sqliteTable(
    "conversations",
    {
      id: id("id").primaryKey(),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    // Remote threads are found by their `context`/`conversation` uri when the parent is unknown.
    (t) => [index("conversations_uri").on(t.uri)],
  ),
);

/** A direct-message thread as one local participant sees it (migrations/0008_conversations.sql). */
export const accountConversations = lazyTable(() =>
  sqliteTable(
    "account_conversations",
    {
      id: integer("id").primaryKey({ autoIncrement: true }),
      accountId: id("account_id").notNull(),
      conversationId: id("conversation_id").notNull(),
      /** JSON array of the other participants' (padded) account ids, sorted. */
      participantIds: text("participant_ids").notNull(),
      lastStatusId: id("last_status_id").notNull(),
      unread: bool("unread").notNull().default(false),
    },
    (t) => [
      uniqueIndex("account_conversations_key").on(t.accountId, t.conversationId, t.participantIds),
      index("account_conversations_page").on(t.accountId, t.lastStatusId),
      index("account_conversations_last").on(t.lastStatusId),
    ],
  ),
);

export const mediaAttachments = lazyTable(() =>
  sqliteTable(
    "media_attachments",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      statusId: id("status_id"),
      scheduledStatusId: id("scheduled_status_id"),
      type: text("type").notNull(), // image | gifv | video | audio | unknown
      fileKey: text("file_key"), // R2 key (server-made)
      contentType: text("content_type"),
      fileSize: integer("file_size"),
      remoteUrl: text("remote_url"),
      previewKey: text("preview_key"),
      previewRemoteUrl: text("preview_remote_url"),
      description: text("description"),
      focusX: integer("focus_x_milli"), // -1000..1000 (thousandths)
      focusY: integer("focus_y_milli"),
      meta: json<Record<string, unknown> | null>()("meta"),
      blurhash: text("blurhash"),
      processing: integer("processing").notNull().default(0), // 0 done, 1 processing
      createdAt: ms("created_at").notNull(),
      // Set when its status was deleted and it was kept for a redraft; not served until attached again, removed by the
      // cron a day later (migrations/0009_media_lifecycle.sql).
      detachedAt: ms("detached_at"),
    },
    (t) => [
      index("media_status").on(t.statusId),
      index("media_account_status").on(t.accountId, t.statusId),
      index("media_unattached").on(sql`coalesce(${t.detachedAt}, ${t.createdAt})`).where(sql`${t.statusId} IS NULL AND ${t.scheduledStatusId} IS NULL`),
      // Cached remote files, oldest first, for the prune pass (migrations/0051)
      index("media_remote_cached").on(t.createdAt).where(sql`${t.fileKey} IS NOT NULL AND ${t.remoteUrl} IS NOT NULL`),
    ],
  ),
);

export const mentions = lazyTable(() =>
  sqliteTable(
    "mentions",
    {
      id: id("id").primaryKey(),
      statusId: id("status_id").notNull(),
      accountId: id("account_id").notNull(),
      silent: bool("silent").notNull().default(false),
    },
    (t) => [uniqueIndex("mentions_status_account").on(t.statusId, t.accountId), index("mentions_account").on(t.accountId, t.statusId)],
  ),
);

export const tags = lazyTable(() =>
  sqliteTable(
    "tags",
    {
      id: id("id").primaryKey(),
      name: text("name").notNull(), // normalised (NFKC, lower case, ASCII-folded)
      displayName: text("display_name").notNull(),
      usable: bool("usable").notNull().default(true),
      trendable: bool("trendable").notNull().default(true),
      lastStatusAt: ms("last_status_at"),
      createdAt: ms("created_at").notNull(),
      // Trend review by staff (migrations/0020_admin_reports_trends.sql): null until reviewed
      reviewedAt: ms("reviewed_at"),
      requestedReviewAt: ms("requested_review_at"),
    },
    (t) => [uniqueIndex("tags_name").on(t.name)],
  ),
);

export const statusTags = lazyTable(() =>
  sqliteTable(
    "status_tags",
    {
      statusId: id("status_id").notNull(),
      tagId: id("tag_id").notNull(),
    },
    (t) => [primaryKey({ columns: [t.statusId, t.tagId] }), index("status_tags_tag").on(t.tagId, t.statusId)],
  ),
);

export const polls = lazyTable(() =>
  sqliteTable(
    "polls",
    {
      id: id("id").primaryKey(),
      statusId: id("status_id"),
      accountId: id("account_id").notNull(),
      options: json<string[]>()("options").notNull(),
      votesPerOption: json<number[]>()("votes_per_option").notNull(),
      multiple: bool("multiple").notNull().default(false),
      hideTotals: bool("hide_totals").notNull().default(false),
      votesCount: integer("votes_count").notNull().default(0),
      votersCount: integer("voters_count").notNull().default(0),
      expiresAt: ms("expires_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
      // A local poll's Update{Question} (new counts) is queued: at most one pending (src/services/statuses/polls.ts).
      updateQueuedAt: ms("update_queued_at"),
    },
    // The cron notifies voters when polls end.
    (t) => [
      index("polls_expires").on(t.expiresAt).where(sql`expires_at IS NOT NULL`),
      // A status's poll (migrations/0039).
      index("polls_status").on(t.statusId).where(sql`status_id IS NOT NULL`),
    ],
  ),
);

export const pollVotes = lazyTable(() =>
  sqliteTable(
    "poll_votes",
    {
      id: id("id").primaryKey(),
      pollId: id("poll_id").notNull(),
      accountId: id("account_id").notNull(),
      choice: integer("choice").notNull(),
      uri: text("uri"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [uniqueIndex("poll_votes_unique").on(t.pollId, t.accountId, t.choice), index("poll_votes_account").on(t.accountId, t.pollId)],
  ),
);

export const idempotencyKeys = lazyTable(() =>
  sqliteTable(
    "idempotency_keys",
    {
      accountId: id("account_id").notNull(),
      key: text("key").notNull(),
      statusId: id("status_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.key] })],
  ),
);
