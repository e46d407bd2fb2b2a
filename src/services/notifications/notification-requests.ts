// Deciding on notification requests (Mastodon's AcceptNotificationRequestService, DismissNotificationRequestService
// and their workers), each in one batch:
// - accept: the sender gets a permission (their notifications are never filtered again), their filtered
//   notifications are let through, and the request goes. Mastodon unfilters in a background job and reports
//   `merged` once it is done; here it is done when the call returns, so /merged is always true.
// - dismiss: the sender's filtered notifications and the request go.
// The triggers of migrations/0004 keep request counts in step while rows change; the request is deleted explicitly.
import { type SQL, sql } from "drizzle-orm";
import { idList, runBatch, type DB, type Statement } from "../../db/client";
import { padId } from "../../lib/text/ids";

type Decision = (me: string, senders: SQL, picked: SQL) => Statement[];

/**
 * The viewer's requests among `ids`: counted, `decide`'s statements run on their senders, then they go, in one
 * batch. Returns how many there were.
 */
async function decideRequests(db: DB, viewerId: string, ids: string[], decide: Decision): Promise<number> {
  if (!ids.length) return 0;
  const me = padId(viewerId);
  const picked = sql`notification_requests WHERE account_id = ${me} AND id IN ${idList(ids)}`;
  const senders = sql`(SELECT from_account_id FROM ${picked})`;
  const res = await runBatch(db, [db.all(sql`SELECT id FROM ${picked}`), ...decide(me, senders, picked), db.run(sql`DELETE FROM ${picked}`)]);
  return (res[0] as unknown[]).length;
}

/** Accepts the viewer's requests among `ids`; returns how many there were. */
export const acceptRequests = (db: DB, viewerId: string, ids: string[]) =>
  decideRequests(db, viewerId, ids, (me, senders, picked) => [
    db.run(sql`INSERT OR IGNORE INTO notification_permissions (account_id, from_account_id, created_at)
      SELECT ${me}, from_account_id, ${Date.now()} FROM ${picked}`),
    db.run(sql`UPDATE notifications SET filtered = 0 WHERE account_id = ${me} AND filtered = 1 AND from_account_id IN ${senders}`),
  ]);

/** Dismisses the viewer's requests among `ids` and drops their senders' filtered notifications; returns how many. */
export const dismissRequests = (db: DB, viewerId: string, ids: string[]) =>
  decideRequests(db, viewerId, ids, (me, senders) => [
    db.run(sql`DELETE FROM notifications WHERE account_id = ${me} AND filtered = 1 AND from_account_id IN ${senders}`),
  ]);
