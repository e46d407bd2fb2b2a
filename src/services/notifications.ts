// Creating notifications: a statement to put in the same batch as the action that causes it. It inserts nothing
// when the recipient blocks the sender, mutes them with hide_notifications, blocks their domain, or when the same
// activity already notified them (unique (account, type, activity)), so a repeated action is a no-op.
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import type { NotificationType } from "../db/schema";
import type { Effects } from "../effects/collector";
import { padId, snowflake } from "../lib/ids";

export interface NewNotification {
  recipientId: string;
  fromAccountId: string;
  type: NotificationType;
  statusId?: string | null;
  reportId?: string | null;
  /** The row that caused it (favourite id, follow id, status id ...). */
  activityId: string;
}

/**
 * The statement creating a notification, for the action's batch. Records the `notify` effect (streaming, Web Push)
 * for the row's id: when the statement's conditions skip the row, the effect finds nothing and does nothing.
 */
export function notificationStatement(db: DB, fx: Effects, n: NewNotification) {
  const now = Date.now();
  const id = snowflake(now);
  fx.add({ type: "notify", notificationId: id });
  const r = padId(n.recipientId);
  const f = padId(n.fromAccountId);
  const st = n.statusId ? padId(n.statusId) : null;
  const rep = n.reportId ? padId(n.reportId) : null;
  return db.run(sql`INSERT OR IGNORE INTO notifications (id, account_id, from_account_id, type, status_id, report_id, activity_id, created_at)
    SELECT ${padId(id)}, ${r}, ${f}, ${n.type}, ${st}, ${rep}, ${padId(n.activityId)}, ${now}
    WHERE ${r} <> ${f}
      AND EXISTS (SELECT 1 FROM users WHERE users.account_id = ${r})
      AND NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = ${r} AND blocks.target_account_id = ${f})
      AND NOT EXISTS (SELECT 1 FROM mutes WHERE mutes.account_id = ${r} AND mutes.target_account_id = ${f}
                      AND mutes.hide_notifications = 1 AND (mutes.expires_at IS NULL OR mutes.expires_at > ${now}))
      AND NOT EXISTS (SELECT 1 FROM account_domain_blocks adb JOIN accounts fa ON fa.id = ${f}
                      WHERE adb.account_id = ${r} AND adb.domain = fa.domain)`);
}

/** Removes the notifications an undone action caused (unfavourite, unfollow, ...). */
export function retractNotificationStatement(db: DB, type: NotificationType, activityId: string) {
  return db.run(sql`DELETE FROM notifications WHERE type = ${type} AND activity_id = ${padId(activityId)}`);
}
