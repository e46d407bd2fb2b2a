// Notifications, and Mastodon 4.3's grouping and filtering around them: group_key and filtered on each row, the
// recipient's policy, requests (senders whose mentions were held back) and permissions (accepted senders).
// Migrations: 0000_init (notifications), 0004_notification_groups.sql (the rest, with the triggers that keep
// notification_requests in step with filtered mentions).
import { sql } from "drizzle-orm";
import { index, primaryKey, sqliteTable, text, uniqueIndex, integer } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, ms } from "../types";

/** Mastodon's notification types, in its order (each can also be pushed: src/push/types.ts). */
export const NOTIFICATION_TYPES = [
  "mention",
  "status",
  "reblog",
  "follow",
  "follow_request",
  "favourite",
  "poll",
  "update",
  // Quote posts (Mastodon 4.5): one of your statuses was quoted; a status you quoted was edited.
  "quote",
  "quoted_update",
  // An account you follow moved (Pleroma's and Akkoma's `move`, with `target`): src/services/accounts/account-migration.ts.
  "move",
  // Collections (Mastodon 4.6): you were added to a collection; a collection you are featured in was updated.
  "added_to_collection",
  "collection_update",
  "admin.sign_up",
  "admin.report",
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export const notifications = lazyTable(() =>
  sqliteTable(
    "notifications",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(), // recipient
      fromAccountId: id("from_account_id").notNull(),
      type: text("type").$type<NotificationType>().notNull(),
      statusId: id("status_id"),
      reportId: id("report_id"),
      // What caused it (a favourite id, a follow id, ...): with type, makes a repeated activity a no-op.
      activityId: id("activity_id"),
      /** The collection an added_to_collection or collection_update notification is about (migrations/0056). */
      collectionId: id("collection_id"),
      createdAt: ms("created_at").notNull(),
      // `favourite-<status>-<hour bucket>`, `reblog-…`, `follow-<hour bucket>`; NULL when it never groups.
      groupKey: text("group_key"),
      // Held back by the recipient's notification policy.
      filtered: bool("filtered").notNull().default(false),
    },
    (t) => [
      index("notifications_account").on(t.accountId, t.id),
      index("notifications_type").on(t.accountId, t.type, t.id),
      uniqueIndex("notifications_activity").on(t.accountId, t.type, t.activityId),
      index("notifications_status").on(t.statusId),
      index("notifications_group").on(t.accountId, t.groupKey, t.id).where(sql`group_key IS NOT NULL`),
      index("notifications_filtered_from").on(t.accountId, t.fromAccountId, t.id).where(sql`filtered = 1`),
      index("notifications_collection").on(t.collectionId).where(sql`collection_id IS NOT NULL`),
    ],
  ),
);

export type PolicyValue = "accept" | "filter" | "drop";

export const notificationPolicies = lazyTable(() =>
  sqliteTable("notification_policies", {
    accountId: id("account_id").primaryKey(),
    forNotFollowing: text("for_not_following").$type<PolicyValue>().notNull().default("accept"),
    forNotFollowers: text("for_not_followers").$type<PolicyValue>().notNull().default("accept"),
    forNewAccounts: text("for_new_accounts").$type<PolicyValue>().notNull().default("accept"),
    forPrivateMentions: text("for_private_mentions").$type<PolicyValue>().notNull().default("filter"),
    forLimitedAccounts: text("for_limited_accounts").$type<PolicyValue>().notNull().default("filter"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  }),
);

export const notificationRequests = lazyTable(() =>
  sqliteTable(
    "notification_requests",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      fromAccountId: id("from_account_id").notNull(),
      lastStatusId: id("last_status_id"),
      notificationsCount: integer("notifications_count").notNull().default(0),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    (t) => [uniqueIndex("notification_requests_pair").on(t.accountId, t.fromAccountId), index("notification_requests_account").on(t.accountId, t.id)],
  ),
);

export const notificationPermissions = lazyTable(() =>
  sqliteTable(
    "notification_permissions",
    {
      accountId: id("account_id").notNull(),
      fromAccountId: id("from_account_id").notNull(),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [primaryKey({ columns: [t.accountId, t.fromAccountId] })],
  ),
);
