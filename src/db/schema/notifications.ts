import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { id, ms } from "./types";

export type NotificationType =
  | "mention"
  | "status"
  | "reblog"
  | "follow"
  | "follow_request"
  | "favourite"
  | "poll"
  | "update"
  | "admin.sign_up"
  | "admin.report";

export const notifications = sqliteTable(
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
    createdAt: ms("created_at").notNull(),
  },
  (t) => [
    index("notifications_account").on(t.accountId, t.id),
    uniqueIndex("notifications_activity").on(t.accountId, t.type, t.activityId),
    index("notifications_status").on(t.statusId),
  ],
);
