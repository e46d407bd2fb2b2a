// Creating notifications: a statement to put in the same batch as the action that causes it, and the `notify` effect
// its caller records (fx.add) once that batch has committed. It is ONE statement
// (INSERT ... SELECT) that decides everything Mastodon's NotifyService decides before saving:
// - nothing is inserted when the recipient blocks the sender, mutes them with hide_notifications, blocks their domain
//   (and does not follow them), muted the status's conversation, or when the same activity already notified them
//   (unique (account, type, activity)), so a repeated action is a no-op;
// - the recipient's notification policy (notification_policies; defaults when there is no row) drops it (no row) or
//   filters it (filtered = 1: held back, and for a mention its sender's notification request is opened by a trigger,
//   migrations/0004); an accepted sender (notification_permissions) is never filtered or dropped by the policy;
// - favourites, reblogs and follows get their group_key (Mastodon's Notification::Groups#set_group_key!).
import { GROUPABLE_TYPES } from "../../queries/notifications/notification-groups";
import { sql, type SQL } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { frozenSql } from "../../db/frozen";
import type { NotificationType } from "../../db/schema";
import type { NotifyEffect } from "../../effects/types";
import { padId, parseId, snowflake } from "../../lib/text/ids";
import { PERMISSIONS } from "../../lib/security/permissions";

export interface NewNotification {
  recipientId: string;
  fromAccountId: string;
  type: NotificationType;
  statusId?: string | null;
  reportId?: string | null;
  /** The collection it is about (added_to_collection, collection_update). */
  collectionId?: string | null;
  /** The row that caused it (favourite id, follow id, status id ...). */
  activityId: string;
}

/** Types a policy may filter or drop (Notification::PROPERTIES filterable); poll, update, status, admin.* never. */
export const FILTERABLE_TYPES: readonly NotificationType[] = ["mention", "reblog", "follow", "follow_request", "favourite"];

const HOUR = 3_600_000;
/** A group reuses its hour bucket while a new member comes within this many hours (MAXIMUM_GROUP_SPAN_HOURS). */
const GROUP_SPAN_HOURS = 12;
/** `for_new_accounts`: the sender's account is younger than this. */
export const NEW_ACCOUNT_MS = 30 * 24 * HOUR;
/** `for_not_followers`: the sender has followed the recipient for less than this, or not at all. */
export const NEW_FOLLOWER_MS = 3 * 24 * HOUR;
/** How far up a thread a private mention is checked for being a reply to one from the recipient (Mastodon: 100). */
const THREAD_DEPTH = 100;
/** UserRole's moderation permissions: a highlighted role holding one, above the recipient's, is staff (bypass_block?). */
const MODERATION_MASK =
  PERMISSIONS.administrator |
  PERMISSIONS.view_dashboard |
  PERMISSIONS.view_audit_log |
  PERMISSIONS.manage_users |
  PERMISSIONS.manage_user_access |
  PERMISSIONS.delete_user_data |
  PERMISSIONS.manage_reports |
  PERMISSIONS.manage_appeals |
  PERMISSIONS.manage_federation |
  PERMISSIONS.manage_blocks |
  PERMISSIONS.manage_taxonomies |
  PERMISSIONS.manage_invites;

/**
 * The group key a notification would start, and the lowest key of the same kind it may join instead: Mastodon keys
 * groups `<type>-<status>-<hour bucket>` (`follow-<hour bucket>`), and a new member reuses the previous bucket of its
 * kind while that bucket is less than 12 hours old and was last used less than 12 hours ago. Hour buckets have six
 * digits until 2084, so keys of one kind sort by bucket as text.
 */
function groupKeyBounds(n: NewNotification, now: number): { fresh: string; lowest: string } | null {
  if (!GROUPABLE_TYPES.includes(n.type)) return null;
  let prefix: string = n.type;
  if (n.type !== "follow") {
    const st = n.statusId ? parseId(n.statusId) : null;
    if (!st) return null;
    prefix = `${n.type}-${st}`;
  }
  const bucket = Math.floor(now / HOUR);
  return { fresh: `${prefix}-${bucket}`, lowest: `${prefix}-${bucket - (GROUP_SPAN_HOURS - 1)}` };
}

/**
 * The policy's verdict on the candidate row `c` (columns of the parameter row): 0 accept, 1 filter, 2 drop.
 * Mastodon's DropCondition / FilterCondition policy parts: each category (for_not_following, for_not_followers,
 * for_new_accounts, for_private_mentions, for_limited_accounts) applies its setting when it matches; drop wins.
 */
function verdictSql(n: NewNotification): SQL {
  if (!FILTERABLE_TYPES.includes(n.type)) return sql`0`;
  const pol = (col: string, def: string) =>
    sql`coalesce((SELECT ${sql.raw(col)} FROM notification_policies np WHERE np.account_id = c.r), ${sql.raw(`'${def}'`)})`;
  const cats: [SQL, SQL][] = [
    [pol("for_not_following", "accept"), sql`c.not_following`],
    [pol("for_not_followers", "accept"), sql`c.not_follower`],
    [pol("for_new_accounts", "accept"), sql`(c.not_following AND c.new_account)`],
    [pol("for_private_mentions", "filter"), sql`(c.not_following AND c.private_mention)`],
    [pol("for_limited_accounts", "filter"), sql`(c.not_following AND c.limited)`],
  ];
  const any = (value: "drop" | "filter") =>
    sql.join(
      cats.map(([p, cond]) => sql`(${p} = ${sql.raw(`'${value}'`)} AND ${cond})`),
      sql` OR `,
    );
  // A mention from staff is never held back (Mastodon: `message? && from_staff?`).
  const staff = n.type === "mention" ? sql`WHEN c.from_staff THEN 0` : sql``;
  return sql`CASE WHEN c.permitted THEN 0 ${staff} WHEN ${any("drop")} THEN 2 WHEN ${any("filter")} THEN 1 ELSE 0 END`;
}

/** Whether the mention's status is a direct one that does not answer a direct mention of the sender by the recipient. */
function privateMentionSql(n: NewNotification): SQL {
  if (n.type !== "mention" || !n.statusId) return sql`0`;
  return sql`(EXISTS (SELECT 1 FROM statuses ms WHERE ms.id = k.st AND ms.visibility = 'direct')
    AND NOT EXISTS (
      WITH RECURSIVE up(id, depth) AS (
        SELECT us.in_reply_to_id, 0 FROM statuses us WHERE us.id = k.st AND us.in_reply_to_id IS NOT NULL
        UNION ALL
        SELECT ps.in_reply_to_id, up.depth + 1 FROM up JOIN statuses ps ON ps.id = up.id
        WHERE ps.in_reply_to_id IS NOT NULL AND up.depth < ${sql.raw(String(THREAD_DEPTH))}
      )
      SELECT 1 FROM up JOIN statuses ts ON ts.id = up.id JOIN mentions tm ON tm.status_id = ts.id
      WHERE ts.account_id = k.r AND ts.visibility = 'direct' AND tm.account_id = k.f AND tm.silent = 0))`;
}

/**
 * A notification to create: the statement for the action's batch, and the `notify` effect (streaming, Web Push) for
 * the row's id, which the caller records once that batch has committed (building the statement records nothing). When
 * the statement's conditions skip the row, the effect finds nothing and does nothing, and a filtered row is neither
 * streamed nor pushed (its readers leave filtered rows out).
 */
export function notificationWrite(db: DB, n: NewNotification): { statement: Statement; effect: NotifyEffect } {
  const now = Date.now();
  const id = snowflake(now);
  return { statement: notificationStatement(db, id, n, now), effect: { type: "notify", notificationId: id } };
}

/** Several notifications: their statements for one batch, and their `notify` effects in the same order. */
export function notificationWrites(db: DB, ns: readonly NewNotification[]): { stmts: Statement[]; notify: NotifyEffect[] } {
  const writes = ns.map((n) => notificationWrite(db, n));
  return { stmts: writes.map((w) => w.statement), notify: writes.map((w) => w.effect) };
}

/** The INSERT … SELECT of notification `id` (see notificationWrite). */
function notificationStatement(db: DB, id: string, n: NewNotification, now: number) {
  const gk = groupKeyBounds(n, now);
  // The text varies only by the type, whether it groups and whether it names a status: made once per variant.
  const key = `${n.type}:${gk ? 1 : 0}:${n.statusId ? 1 : 0}`;
  let insert = notificationInserts.get(key);
  if (!insert) {
    insert = frozenSql(() => notificationInsertSql(n, !!gk));
    notificationInserts.set(key, insert);
  }
  return db.run(
    insert(db, {
      id: padId(id),
      r: padId(n.recipientId),
      f: padId(n.fromAccountId),
      type: n.type,
      st: n.statusId ? padId(n.statusId) : null,
      rep: n.reportId ? padId(n.reportId) : null,
      col: n.collectionId ? padId(n.collectionId) : null,
      act: padId(n.activityId),
      now,
      lowest: gk?.lowest ?? null,
      fresh: gk?.fresh ?? null,
    }),
  );
}

const notificationInserts = new Map<string, ReturnType<typeof frozenSql>>();

/** The notification's INSERT … SELECT for `n`'s variant, its values as placeholders (notificationStatement binds them). */
function notificationInsertSql(n: NewNotification, grouped: boolean): SQL {
  const p = (name: string) => sql.placeholder(name);
  const groupKey = grouped
    ? sql`CASE WHEN c.verdict = 0 THEN coalesce((SELECT g.group_key FROM notifications g
        WHERE g.account_id = c.r AND g.group_key >= ${p("lowest")} AND g.group_key <= ${p("fresh")} AND g.created_at > c.now - ${GROUP_SPAN_HOURS * HOUR}
        ORDER BY g.group_key DESC, g.id DESC LIMIT 1), ${p("fresh")}) END`
    : sql`NULL`;
  // Parameters are bound once (k) and read by name: the conditions use them many times (D1: 100 bound values).
  const params = sql`SELECT ${p("id")} AS id, ${p("r")} AS r, ${p("f")} AS f, ${p("type")} AS type,
    ${p("st")} AS st, ${p("rep")} AS rep, ${p("col")} AS col, ${p("act")} AS act, ${p("now")} AS now`;
  const facts = sql`SELECT k.*,
    EXISTS (SELECT 1 FROM notification_permissions pm WHERE pm.account_id = k.r AND pm.from_account_id = k.f) AS permitted,
    NOT EXISTS (SELECT 1 FROM follows fw WHERE fw.account_id = k.r AND fw.target_account_id = k.f) AS not_following,
    NOT EXISTS (SELECT 1 FROM follows fr WHERE fr.account_id = k.f AND fr.target_account_id = k.r AND fr.created_at <= k.now - ${NEW_FOLLOWER_MS}) AS not_follower,
    EXISTS (SELECT 1 FROM accounts na WHERE na.id = k.f AND na.created_at > k.now - ${NEW_ACCOUNT_MS}) AS new_account,
    EXISTS (SELECT 1 FROM accounts la WHERE la.id = k.f AND la.silenced_at IS NOT NULL) AS limited,
    ${privateMentionSql(n)} AS private_mention,
    ${n.type === "mention" ? fromStaffSql() : sql`0`} AS from_staff
    FROM (${params}) k`;
  const verdict = sql`SELECT c.*, ${verdictSql(n)} AS verdict FROM (${facts}) c`;
  return sql`INSERT OR IGNORE INTO notifications (id, account_id, from_account_id, type, status_id, report_id, collection_id, activity_id, created_at, filtered, group_key)
    SELECT c.id, c.r, c.f, c.type, c.st, c.rep, c.col, c.act, c.now, c.verdict, ${groupKey}
    FROM (${verdict}) c
    WHERE c.verdict < 2 AND c.r <> c.f
      AND EXISTS (SELECT 1 FROM users WHERE users.account_id = c.r)
      AND NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = c.r AND blocks.target_account_id = c.f)
      AND NOT EXISTS (SELECT 1 FROM mutes WHERE mutes.account_id = c.r AND mutes.target_account_id = c.f
                      AND mutes.hide_notifications = 1 AND (mutes.expires_at IS NULL OR mutes.expires_at > c.now))
      AND (NOT c.not_following OR NOT EXISTS (SELECT 1 FROM account_domain_blocks adb JOIN accounts fa ON fa.id = c.f
                      WHERE adb.account_id = c.r AND adb.domain = fa.domain))
      AND NOT EXISTS (SELECT 1 FROM statuses cs JOIN conversation_mutes cm ON cm.conversation_id = cs.conversation_id
                      WHERE cs.id = c.st AND cm.account_id = c.r)`;
}

/** The sender is local staff whose role outranks the recipient's (Mastodon's UserRole#bypass_block?). */
function fromStaffSql(): SQL {
  return sql`EXISTS (SELECT 1 FROM users su JOIN user_roles sr ON sr.id = su.role_id
    WHERE su.account_id = k.f AND sr.highlighted = 1 AND (sr.permissions & ${sql.raw(String(MODERATION_MASK))}) <> 0
      AND sr.position > coalesce((SELECT rr.position FROM users ru JOIN user_roles rr ON rr.id = ru.role_id WHERE ru.account_id = k.r), -1))`;
}

/**
 * Removes the notification an undone action caused (unfollow, a follow request ended) from its recipient's: found by
 * notifications_activity (recipient, type, activity), where type and activity alone would scan every notification.
 */
export function retractNotificationStatement(db: DB, recipientId: string, type: NotificationType, activityId: string) {
  return db.run(sql`DELETE FROM notifications WHERE account_id = ${padId(recipientId)} AND type = ${type} AND activity_id = ${padId(activityId)}`);
}

/**
 * Notifications of `type` for the (recipient, activity) pairs `pairs` selects (as `recipient` and `activity`): found by
 * notifications_activity, which leads with the recipient.
 */
function ofActivities(type: NotificationType, pairs: SQL): SQL {
  return sql`(account_id, type, activity_id) IN (SELECT p.recipient, ${type}, p.activity FROM (${pairs}) p)`;
}

/** Removes the notifications undone actions caused, by recipient and activity (`pairs`: see ofActivities). */
export function retractNotificationsStatement(db: DB, type: NotificationType, pairs: SQL) {
  return db.run(sql`DELETE FROM notifications WHERE ${ofActivities(type, pairs)}`);
}

/**
 * Notifications about the statuses `ids` (a SELECT of status ids) and the boost notifications the boosts among them
 * caused, which name the boosted status: each by an index (notifications_status; notifications_activity through the
 * boosted status's author, the boost notification's recipient). Run before the statuses go.
 */
export function statusNotificationsDeleteStatement(db: DB, ids: SQL) {
  const boosts = sql`SELECT o.account_id AS recipient, b.id AS activity FROM statuses b JOIN statuses o ON o.id = b.reblog_of_id WHERE b.id IN ${ids}`;
  return db.run(sql`DELETE FROM notifications WHERE status_id IN ${ids} OR ${ofActivities("reblog", boosts)}`);
}
