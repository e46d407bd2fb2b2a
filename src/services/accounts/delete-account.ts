// Deleting an account's data (Mastodon's DeleteAccountService with reserve_username and reserve_email, as staff's
// "delete" of a suspended account runs it; a user's own "delete my account" can start it the same way).
//
// - At once, in the caller's batch (`startAccountDeletionStatements`): the profile is emptied, the login disabled and
//   every token, grant, session and push subscription removed. The account row stays, suspended, with its keys: its
//   username stays taken, its actor answers as suspended, and the Delete below can still be signed.
// - Right after, as effects: Delete{Actor} to the servers of its followers and of the accounts it follows (their
//   inboxes read now, before the follows go, and carried in the action), then `delete_account`.
// - `delete_account` (the JOBS consumer, `deleteAccountChunk`) removes the statuses DELETE_CHUNK at a time, oldest
//   first, each chunk one batch of set-based statements (so the work per message is bounded whatever the account's
//   size) and then re-records itself; once no status is left, one last batch removes everything else the account
//   had or others had about it (follows both ways, blocks, mutes, favourites, bookmarks, notifications, lists,
//   filters, ...). Counters follow from the triggers. R2 objects of removed media, avatar and header go through
//   `delete_media`. Reports about the account and the admin log are kept, as Mastodon keeps them.
// Streams are not told about each removed status (the Delete{Actor} and the emptied feeds cover it; clients refetch).
import { sql } from "drizzle-orm";
import { type DB, runBatch, type Statement } from "../../db/client";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { followerInboxes, followingInboxes } from "../../federation/outbound/recipients";
import { forbidden } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";
import { getAdminAccount, logStatement, type Moderator } from "../admin/accounts";
import { statusNotificationsDeleteStatement } from "../notifications/notifications";
import type { AdminAccountRow } from "../../db/schema";

/** Statuses removed per `delete_account` message. */
export const DELETE_CHUNK = 100;
/** Inboxes per Delete{Actor} action (about 60 bytes each, far below a queue message's 128 KB). */
const INBOXES_PER_ACTION = 500;

type Keys = { fileKey?: string | null; previewKey?: string | null; avatarKey?: string | null; headerKey?: string | null };
const keysOf = (rows: Keys[]) => rows.flatMap((r) => [r.fileKey, r.previewKey, r.avatarKey, r.headerKey]).filter((k): k is string => !!k);

/** What goes in the batch that starts a deletion: the login and the profile, at once. */
export function startAccountDeletionStatements(db: DB, accountId: string, now = Date.now()): Statement[] {
  const a = padId(accountId);
  const u = sql`(SELECT id FROM users WHERE account_id = ${a})`;
  return [
    db.run(sql`UPDATE users SET disabled = 1, updated_at = ${now} WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM oauth_access_tokens WHERE user_id IN ${u}`),
    db.run(sql`DELETE FROM oauth_access_grants WHERE user_id IN ${u}`),
    db.run(sql`DELETE FROM web_sessions WHERE user_id IN ${u}`),
    db.run(sql`DELETE FROM web_push_subscriptions WHERE account_id = ${a}`),
    db.run(sql`UPDATE accounts SET display_name = '', note = '', note_source = '', fields = '[]', emojis = NULL, locked = 0,
      discoverable = 0, indexable = 0, moved_to_account_id = NULL, suspended_at = coalesce(suspended_at, ${now}),
      suspension_origin = coalesce(suspension_origin, 'local'), updated_at = ${now} WHERE id = ${a}`),
  ];
}

/**
 * What follows a started deletion, to record once its batch committed (with it: src/effects/commit.ts): Delete{Actor}
 * for a local account (its inboxes read now, before the batch), then the chunks.
 */
export async function accountDeletionEffects(db: DB, account: { id: string; domain: string | null }): Promise<(fx: Effects) => void> {
  const inboxes = account.domain ? [] : [...new Set([...(await followerInboxes(db, account.id)), ...(await followingInboxes(db, account.id))])].sort();
  return (fx) => {
    if (!account.domain) {
      for (let i = 0; i < inboxes.length; i += INBOXES_PER_ACTION) {
        fx.federate({ kind: "delete_actor", accountId: account.id, inboxes: inboxes.slice(i, i + INBOXES_PER_ACTION) });
      }
      fx.add({ type: "disconnect_streams", accountId: account.id, tokenId: null });
    }
    fx.add({ type: "delete_account", accountId: account.id });
  };
}

/**
 * DELETE /api/v1/admin/accounts/:id: only a suspended account's data can be deleted (Mastodon's AccountPolicy#destroy?),
 * and staff cannot delete an account whose role outranks theirs. Answers with the account as it was.
 */
export async function adminDeleteAccount(db: DB, fx: Effects, actor: Moderator, id: string): Promise<AdminAccountRow> {
  const row = await getAdminAccount(db, id);
  if (!row.account.suspendedAt) throw forbidden();
  if (row.role && !(actor.role && actor.role.position > row.role.position)) throw forbidden();
  const now = Date.now();
  const record = await accountDeletionEffects(db, row.account);
  await commit(
    db,
    fx,
    [...startAccountDeletionStatements(db, row.account.id, now), logStatement(db, actor, "destroy", "Account", row.account.id, now)],
    record,
  );
  return row;
}

/** One step of a deletion (the `delete_account` effect): a chunk of statuses, or, when none is left, the rest. */
export async function deleteAccountChunk(db: DB, fx: Effects, accountId: string): Promise<void> {
  const a = padId(accountId);
  const rows = await db.all<{ id: string }>(sql`SELECT id FROM statuses WHERE account_id = ${a} ORDER BY id LIMIT ${DELETE_CHUNK}`);
  if (rows.length) {
    const res = await runBatch(db, statusChunkStatements(db, JSON.stringify(rows.map((r) => r.id))));
    const keys = keysOf(res[0] as Keys[]);
    if (keys.length) fx.add({ type: "delete_media", keys });
    fx.add({ type: "delete_account", accountId });
    return;
  }
  const res = await runBatch(db, restStatements(db, a));
  const keys = [...keysOf(res[0] as Keys[]), ...keysOf(res[1] as Keys[])];
  if (keys.length) fx.add({ type: "delete_media", keys });
}

/** Set-based statements removing a chunk of the account's statuses (`list`: a JSON array of padded ids). */
function statusChunkStatements(db: DB, list: string): Statement[] {
  const own = sql`(SELECT value FROM json_each(${list}))`;
  const boosts = sql`(SELECT id FROM statuses WHERE reblog_of_id IN ${own})`;
  const both = sql`(SELECT value FROM json_each(${list}) UNION SELECT id FROM statuses WHERE reblog_of_id IN ${own})`;
  const now = Date.now();
  return [
    db.all<Keys>(sql`DELETE FROM media_attachments WHERE status_id IN ${own} RETURNING file_key AS fileKey, preview_key AS previewKey`),
    // Their URIs answer 410 from now on (boosts have no document of their own).
    db.run(sql`INSERT OR IGNORE INTO tombstones (uri, account_id, created_at)
      SELECT uri, account_id, ${now} FROM statuses WHERE id IN ${own} AND reblog_of_id IS NULL AND local = 1`),
    statusNotificationsDeleteStatement(db, both),
    db.run(sql`DELETE FROM home_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM mentions WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM status_tags WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM custom_filter_statuses WHERE status_id IN ${both}`),
    // Pins and idempotency keys by their author's index (status_pins_pair, the keys' primary key), as deleteStatusStatements.
    db.run(sql`DELETE FROM status_pins WHERE (account_id, status_id) IN (SELECT account_id, id FROM statuses WHERE id IN ${both})`),
    db.run(sql`DELETE FROM bookmarks WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM favourites WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE status_id IN ${own})`),
    db.run(sql`DELETE FROM polls WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM status_edits WHERE status_id IN ${own}`),
    db.run(sql`DELETE FROM idempotency_keys WHERE (account_id, status_id) IN (SELECT account_id, id FROM statuses WHERE id IN ${own})`),
    // Conversations whose last status goes point at the newest one left (or go), as conversationsAfterDeleteStatements.
    db.run(sql`UPDATE account_conversations SET last_status_id = coalesce((
        SELECT max(s.id) FROM statuses s
        WHERE s.conversation_id = account_conversations.conversation_id AND s.id NOT IN ${own} AND s.visibility = 'direct'
          AND s.reblog_of_id IS NULL
          AND (s.account_id = account_conversations.account_id
               OR EXISTS (SELECT 1 FROM mentions m WHERE m.status_id = s.id AND m.account_id = account_conversations.account_id))), '')
      WHERE last_status_id IN ${own}`),
    db.run(sql`DELETE FROM account_conversations WHERE last_status_id = ''`),
    db.run(sql`DELETE FROM statuses WHERE id IN ${boosts}`),
    db.run(sql`DELETE FROM statuses WHERE id IN ${own}`),
  ];
}

/** Everything else the account had, or others had about it, once its statuses are gone. */
function restStatements(db: DB, a: string): Statement[] {
  const lists = sql`(SELECT id FROM lists WHERE account_id = ${a})`;
  const now = Date.now();
  return [
    db.all<Keys>(sql`DELETE FROM media_attachments WHERE account_id = ${a} RETURNING file_key AS fileKey, preview_key AS previewKey`),
    db.all<Keys>(sql`SELECT avatar_key AS avatarKey, header_key AS headerKey FROM accounts WHERE id = ${a}`),
    db.run(sql`UPDATE accounts SET avatar_key = NULL, avatar_remote_url = NULL, header_key = NULL, header_remote_url = NULL,
      updated_at = ${now} WHERE id = ${a}`),
    db.run(sql`DELETE FROM notifications WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM notifications WHERE from_account_id = ${a}`),
    db.run(sql`DELETE FROM notification_requests WHERE account_id = ${a} OR from_account_id = ${a}`),
    db.run(sql`DELETE FROM notification_permissions WHERE account_id = ${a} OR from_account_id = ${a}`),
    db.run(sql`DELETE FROM notification_policies WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM favourites WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM bookmarks WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM status_pins WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM poll_votes WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM mentions WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM follows WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM follows WHERE target_account_id = ${a}`),
    db.run(sql`DELETE FROM follow_requests WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM blocks WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM mutes WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM account_notes WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM account_pins WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM suggestion_dismissals WHERE account_id = ${a} OR target_account_id = ${a}`),
    db.run(sql`DELETE FROM account_domain_blocks WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM list_feed WHERE list_id IN ${lists}`),
    db.run(sql`DELETE FROM list_accounts WHERE list_id IN ${lists} OR account_id = ${a}`),
    db.run(sql`DELETE FROM lists WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM custom_filter_keywords WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM custom_filter_statuses WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM custom_filters WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM featured_tags WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM tag_follows WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM markers WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM conversation_mutes WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM account_conversations WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM announcement_dismissals WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM announcement_reactions WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM scheduled_statuses WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM home_feed WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM feed_states WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM status_trends WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM annual_reports WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM collection_items WHERE collection_id IN (SELECT id FROM collections WHERE account_id = ${a})`),
    db.run(sql`DELETE FROM collections WHERE account_id = ${a}`),
    db.run(sql`DELETE FROM collection_items WHERE account_id = ${a}`),
    db.run(sql`UPDATE collections SET item_count = (SELECT count(*) FROM collection_items i WHERE i.collection_id = collections.id AND i.state = 'accepted')
      WHERE item_count <> (SELECT count(*) FROM collection_items i WHERE i.collection_id = collections.id AND i.state = 'accepted')`),
  ];
}
