// Deciding on notification requests (Mastodon's AcceptNotificationRequestService, DismissNotificationRequestService
// and their workers), each in one batch:
// - accept: the sender gets a permission (their notifications are never filtered again), their filtered
//   notifications are let through, and the request goes. Mastodon unfilters in a background job and reports
//   `merged` once it is done; here it is done when the call returns, so /merged is always true.
// - dismiss: the sender's filtered notifications and the request go.
// The triggers of migrations/0004 keep request counts in step while rows change; the request is deleted explicitly.
import { sql } from "drizzle-orm";
import { idList, runBatch, type DB } from "../db/client";
import { padId } from "../lib/ids";

/** Accepts the viewer's requests among `ids`; returns how many there were. */
export async function acceptRequests(db: DB, viewerId: string, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const me = padId(viewerId);
  const senders = sql`(SELECT from_account_id FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)})`;
  const res = await runBatch(db, [
    db.all(sql`SELECT id FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`),
    db.run(sql`INSERT OR IGNORE INTO notification_permissions (account_id, from_account_id, created_at)
      SELECT ${me}, from_account_id, ${Date.now()} FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`),
    db.run(sql`UPDATE notifications SET filtered = 0 WHERE account_id = ${me} AND filtered = 1 AND from_account_id IN ${senders}`),
    db.run(sql`DELETE FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`),
  ]);
  return (res[0] as unknown[]).length;
}

/** Dismisses the viewer's requests among `ids` and drops their senders' filtered notifications; returns how many. */
export async function dismissRequests(db: DB, viewerId: string, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const me = padId(viewerId);
  const senders = sql`(SELECT from_account_id FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)})`;
  const res = await runBatch(db, [
    db.all(sql`SELECT id FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`),
    db.run(sql`DELETE FROM notifications WHERE account_id = ${me} AND filtered = 1 AND from_account_id IN ${senders}`),
    db.run(sql`DELETE FROM notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`),
  ]);
  return (res[0] as unknown[]).length;
}
