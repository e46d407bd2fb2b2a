// Fan-out on write (Mastodon's FanOutOnWriteService): a new status or reblog is inserted into the home feeds of its
// author and of the local followers allowed to see it, into the list feeds that show its author, into the home feeds
// of local users following one of its hashtags, and raises "status" notifications for followers who asked for them.
//
// Every write is an INSERT ... SELECT with the rules of feed-filter.ts, so one chunk of followers costs one D1 batch
// whatever its size. Followers are taken FANOUT_CHUNK at a time in follows.id order; when a chunk is full the job
// re-enqueues itself with the last follows.id as cursor, so an account with many followers never runs into the
// per-invocation limits (CPU, 30 s per query, statements per batch).
//
// Both directions report which feeds changed (INSERT ... RETURNING, or a read before the DELETEs, in the same batch: no
// extra round trip), so the streaming API can tell exactly those feeds' owners (src/streaming/publish.ts).
import { sql } from "drizzle-orm";
import { type AheadRead, type DB, runBatch, type Statement } from "../db/client";
import { padId, unpadId } from "../lib/text/ids";
import { bindText, boundText, type BoundText } from "../db/bound-sql";
import type { Effects } from "../effects/collector";
import type { FanOutDelivered } from "../effects/types";
import { notificationWrite } from "../services/notifications/notifications";
import { feedFilter, MAX_FEED_ITEMS } from "./feed-filter";

export const FANOUT_CHUNK = 500;

/**
 * Trimming walks the newest MAX_FEED_ITEMS index entries of each feed (~800 steps per feed), which is most of the
 * cost of a fan-out chunk if done on every status. Mastodon trims on every push because Redis ZREMRANGEBYRANK is
 * O(log n); here a chunk trims its feeds with probability 1/TRIM_EVERY instead, so the work is amortised to ~50 steps
 * per delivered entry and a busy feed overshoots 800 by about TRIM_EVERY rows, which readers never see (they page
 * from the newest end). Merges and regenerations, which add many rows at once, always trim.
 */
export const TRIM_EVERY = 16;

const VISIBLE_TO_FOLLOWERS = `('public','unlisted','private')`;

/**
 * Deletes all but the newest MAX_FEED_ITEMS rows of each feed listed by `ids` (a SELECT of feed keys as `id`). Rows are
 * named by their key (home_feed has no rowid: a WITHOUT ROWID table, migrations/0034).
 */
function trimFeedsSql(table: "home_feed" | "list_feed", key: "account_id" | "list_id", ids: string) {
  return `WITH cuts AS MATERIALIZED (
      SELECT t.id AS k, (SELECT h2.status_id FROM ${table} h2 WHERE h2.${key} = t.id ORDER BY h2.status_id DESC LIMIT 1 OFFSET ${MAX_FEED_ITEMS - 1}) AS cut
      FROM (${ids}) t)
    DELETE FROM ${table} WHERE (${key}, status_id) IN (
      SELECT h.${key}, h.status_id FROM cuts JOIN ${table} h ON h.${key} = cuts.k AND h.status_id < cuts.cut WHERE cuts.cut IS NOT NULL)`;
}

/** Trims the home feeds of the accounts `accounts` selects (as `id`). */
export const trimHomeFeedsSql = (accounts: string) => trimFeedsSql("home_feed", "account_id", accounts);
/** Trims the list feeds of the lists `lists` selects (as `id`). */
export const trimListFeedsSql = (lists: string) => trimFeedsSql("list_feed", "list_id", lists);

/**
 * Whether status `s` belongs in list `l` by the list's replies_policy (Mastodon's FeedManager#filter_from_list?):
 * not a reply, a self-reply, a reply to the list's owner; else `followed` takes any reply, `list` replies to members.
 */
export const LIST_REPLIES_RULE = `(s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id = s.account_id OR s.in_reply_to_account_id = l.account_id
             OR l.replies_policy = 'followed'
             OR (l.replies_policy = 'list' AND EXISTS (SELECT 1 FROM list_accounts la2 WHERE la2.list_id = l.id AND la2.account_id = s.in_reply_to_account_id)))`;

/** A list feed and its owner (whose streaming `list` subscription shows it). */
export interface FeedList {
  listId: string;
  accountId: string;
}

/** What one chunk reached (the `fanned_out` effect carries it: src/effects/types.ts). */
export type FanOutResult = FanOutDelivered;

/**
 * The statements of one fan-out chunk, as parsed text: they depend only on whether it is the first chunk and whether
 * it trims, so the four plans are written and parsed once per isolate, and each call binds the status, the cursor and
 * the time.
 */
interface Plan {
  texts: BoundText[];
  homeInserts: number[];
  listInsert: number;
  listOwners: number;
  conversationUpserts: number;
  writes: number;
}
const plans = new Map<string, Plan>();

function fanOutPlan(first: boolean, trim: boolean): Plan {
  const key = `${first}${trim}`;
  const known = plans.get(key);
  if (known) return known;
  const status = `statuses s LEFT JOIN statuses o ON o.id = s.reblog_of_id`;
  const author = `(SELECT account_id FROM statuses WHERE id = ?1)`;
  const chunk = `chunk AS MATERIALIZED (SELECT id, account_id, show_reblogs, notify, languages FROM follows
      WHERE target_account_id = ${author} AND id > ?2 ORDER BY id LIMIT ${FANOUT_CHUNK})`;
  const home = (receiver: string, follow?: string, extra: Partial<Parameters<typeof feedFilter>[0]> = {}) =>
    feedFilter({ receiver, follow, dedupe: { table: "home_feed", key: receiver }, skipDropped: true, ...extra });

  // ?1 = status id, ?2 = cursor (placeholders every statement reuses).
  const stmts: string[] = [];
  // Statements whose RETURNING rows are the home feeds (account_id) or list feeds (list_id) that received the status.
  const homeInserts: number[] = [];
  let listInsert = -1;
  let listOwners = -1;
  let conversationUpserts = -1;
  // Followers in this chunk.
  homeInserts.push(stmts.length);
  stmts.push(`WITH ${chunk}
    INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
    SELECT c.account_id, s.id, s.reblog_of_id, s.account_id FROM chunk c JOIN statuses s ON s.id = ?1 LEFT JOIN statuses o ON o.id = s.reblog_of_id
    WHERE s.visibility IN ${VISIBLE_TO_FOLLOWERS} AND ${home("c.account_id", "c")}
    RETURNING account_id`);
  if (first) {
    // The author's own feed. postStatus writes a local author's row itself (they see their post at once), so the
    // author is reported whenever the row is there, not only when this statement wrote it.
    stmts.push(`INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
      SELECT s.account_id, s.id, s.reblog_of_id, s.account_id FROM ${status} WHERE s.id = ?1 AND ${home("s.account_id")}`);
    homeInserts.push(stmts.length);
    stmts.push(`SELECT account_id FROM home_feed WHERE account_id = ${author} AND status_id = ?1`);
    // Direct statuses reach the mentioned local accounts (and nobody else).
    homeInserts.push(stmts.length);
    stmts.push(`INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
      SELECT m.account_id, s.id, s.reblog_of_id, s.account_id FROM ${status} JOIN mentions m ON m.status_id = s.id
      WHERE s.id = ?1 AND s.visibility = 'direct' AND ${home("m.account_id")}
      RETURNING account_id`);
    // Followed hashtags: public, original statuses of accounts that are not silenced (Mastodon's broadcastable?).
    homeInserts.push(stmts.length);
    stmts.push(`INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
      SELECT DISTINCT tf.account_id, s.id, s.reblog_of_id, s.account_id FROM ${status}
      JOIN status_tags st ON st.status_id = s.id JOIN tag_follows tf ON tf.tag_id = st.tag_id
      WHERE s.id = ?1 AND s.visibility = 'public' AND s.reblog_of_id IS NULL
        AND NOT EXISTS (SELECT 1 FROM accounts sa WHERE sa.id = s.account_id AND sa.silenced_at IS NOT NULL)
        AND ${home("tf.account_id", undefined, { replyRule: false })}
      RETURNING account_id`);
    // Lists that contain the author, when their owner follows the author; replies by the list's replies_policy.
    listInsert = stmts.length;
    stmts.push(`INSERT OR IGNORE INTO list_feed (list_id, status_id, reblog_of_id, author_id)
      SELECT l.id, s.id, s.reblog_of_id, s.account_id FROM ${status}
      JOIN list_accounts la ON la.account_id = s.account_id JOIN lists l ON l.id = la.list_id
      JOIN follows lf ON lf.account_id = l.account_id AND lf.target_account_id = s.account_id
      WHERE s.id = ?1 AND s.visibility IN ${VISIBLE_TO_FOLLOWERS}
        AND ${LIST_REPLIES_RULE}
        AND ${feedFilter({ receiver: "l.account_id", follow: "lf", dedupe: { table: "list_feed", key: "l.id" } })}
      RETURNING list_id`);
    // Owners of the lists holding the status (the RETURNING rows above say which of them received it now).
    listOwners = stmts.length;
    stmts.push(`SELECT l.id AS list_id, l.account_id AS account_id FROM lists l WHERE l.id IN (SELECT list_id FROM list_feed WHERE status_id = ?1)`);
    // A direct status joins the conversation of every local participant whose home feed has it (the author and the
    // mentioned accounts the feed rules let it reach): Mastodon's AccountConversation.add_status.
    conversationUpserts = stmts.length;
    stmts.push(conversationUpsertSql);
  }
  if (trim) {
    const receivers = `SELECT account_id AS id FROM follows WHERE target_account_id = ${author} AND follows.id > ?2 ORDER BY follows.id LIMIT ${FANOUT_CHUNK}`;
    const grown = (list: string) => `SELECT x.id FROM (${list}) x WHERE EXISTS (SELECT 1 FROM home_feed g WHERE g.account_id = x.id AND g.status_id = ?1)`;
    stmts.push(trimHomeFeedsSql(grown(first ? `SELECT id FROM (${receivers}) UNION SELECT ${author}` : receivers)));
    if (first) stmts.push(trimListFeedsSql(`SELECT list_id AS id FROM list_feed WHERE status_id = ?1`));
  }
  const writes = stmts.length;
  // Is there another chunk after this one?
  stmts.push(`SELECT id FROM follows WHERE target_account_id = ${author} AND id > ?2 ORDER BY id LIMIT 1 OFFSET ${FANOUT_CHUNK - 1}`);
  // Followers with notify=1 who may see it: original, non-reply (self-replies count) statuses only.
  stmts.push(`WITH ${chunk}
    SELECT c.account_id AS recipient, s.account_id AS author FROM chunk c JOIN statuses s ON s.id = ?1 LEFT JOIN statuses o ON o.id = s.reblog_of_id
    WHERE c.notify = 1 AND s.reblog_of_id IS NULL AND (s.in_reply_to_id IS NULL OR s.in_reply_to_account_id = s.account_id)
      AND s.visibility IN ${VISIBLE_TO_FOLLOWERS} AND ${feedFilter({ receiver: "c.account_id", follow: "c", dedupe: { table: "home_feed", key: "c.account_id" } })}`);

  const plan = {
    texts: stmts.map((q) => boundText(q.replaceAll("?1", "$s").replaceAll("?2", "$c"))),
    homeInserts,
    listInsert,
    listOwners,
    conversationUpserts,
    writes,
  };
  plans.set(key, plan);
  return plan;
}

/** One chunk of a fan-out as statements, to run alone (fanOut) or in the batch that wrote the status (ingestNote). */
export interface FanOutChunk {
  stmts: Statement[];
  /**
   * The chunk's outcome from its statements' results (in order): writes the `status` notifications it found (batches
   * of their own) and records their `notify` effects on `fx` as each batch commits.
   */
  read(fx: Effects, res: readonly unknown[]): Promise<FanOutResult>;
}

/** The statements of one chunk (null for ids that are not ids: nothing to do). The status must be written before. */
export function fanOutChunk(db: DB, statusId: string, cursor: string | undefined, opts: { trim?: boolean } = {}): FanOutChunk | null {
  if (!/^\d{1,19}$/.test(statusId) || (cursor !== undefined && !/^\d{1,19}$/.test(cursor))) return null;
  const now = Date.now();
  const S = padId(statusId);
  const C = padId(cursor ?? "0");
  const first = !cursor;
  const trim = opts.trim ?? Math.random() < 1 / TRIM_EVERY;
  const { texts, homeInserts, listInsert, listOwners, conversationUpserts, writes } = fanOutPlan(first, trim);
  const stmts: Statement[] = texts.map((t) => db.all(bindText(t, { s: S, c: C, now })));
  const read = async (fx: Effects, out: readonly unknown[]): Promise<FanOutResult> => {
    const res = out as Record<string, unknown>[][];
    const nextRow = res[writes]?.[0] as { id: string } | undefined;
    const notify = (res[writes + 1] ?? []) as { recipient: string; author: string }[];
    if (notify.length) {
      const ns = notify.map((n) =>
        notificationWrite(db, { recipientId: unpadId(n.recipient), fromAccountId: unpadId(n.author), type: "status", statusId, activityId: statusId }),
      );
      for (let i = 0; i < ns.length; i += 100) {
        const chunk = ns.slice(i, i + 100);
        await runBatch(
          db,
          chunk.map((n) => n.statement),
        );
        fx.add(...chunk.map((n) => n.effect));
      }
    }
    const homeAccountIds = [...new Set(homeInserts.flatMap((i) => (res[i] as { account_id: string }[]).map((r) => unpadId(String(r.account_id)))))];
    const lists: FeedList[] = [];
    if (listInsert >= 0) {
      const owners = new Map((res[listOwners] as { list_id: string; account_id: string }[]).map((r) => [String(r.list_id), unpadId(String(r.account_id))]));
      for (const r of res[listInsert] as { list_id: string }[]) {
        const owner = owners.get(String(r.list_id));
        if (owner) lists.push({ listId: unpadId(String(r.list_id)), accountId: owner });
      }
    }
    const conversations =
      conversationUpserts >= 0
        ? (res[conversationUpserts] as { id: number; account_id: string }[]).map((r) => ({ id: String(r.id), accountId: unpadId(String(r.account_id)) }))
        : [];
    return { ...(nextRow ? { next: unpadId(nextRow.id) } : {}), homeAccountIds, lists, shared: first, conversations };
  };
  return { stmts, read };
}

/**
 * Upserts the account_conversations of a direct status (?1): one per local account whose home feed holds it, keyed
 * by thread and the other participants (author and mentioned accounts, sorted). The newest status wins; it is unread
 * for everyone but its author. RETURNING: the rows written.
 */
const conversationUpsertSql = `INSERT INTO account_conversations (account_id, conversation_id, participant_ids, last_status_id, unread)
    SELECT h.account_id, s.conversation_id,
      (SELECT json_group_array(p) FROM (SELECT p FROM (SELECT s.account_id AS p UNION SELECT m.account_id FROM mentions m WHERE m.status_id = s.id) WHERE p <> h.account_id ORDER BY p)),
      s.id, h.account_id <> s.account_id
    FROM home_feed h JOIN statuses s ON s.id = h.status_id
    WHERE h.status_id = ?1 AND s.visibility = 'direct' AND s.reblog_of_id IS NULL AND s.conversation_id IS NOT NULL
    ON CONFLICT (account_id, conversation_id, participant_ids) DO UPDATE SET
      unread = CASE WHEN excluded.last_status_id >= account_conversations.last_status_id THEN excluded.unread ELSE account_conversations.unread END,
      last_status_id = max(account_conversations.last_status_id, excluded.last_status_id)
    RETURNING id, account_id`;

export async function fanOut(
  db: DB,
  fx: Effects,
  statusId: string,
  cursor: string | undefined,
  opts: { trim?: boolean; ahead?: AheadRead | null } = {},
): Promise<FanOutResult> {
  const chunk = fanOutChunk(db, statusId, cursor, opts);
  if (!chunk) return { homeAccountIds: [], lists: [], shared: false, conversations: [] };
  // `ahead`: reads for what follows the chunk (its publish), made at the end of its batch.
  const ahead = opts.ahead;
  const res = await runBatch(db, ahead ? [...chunk.stmts, ...ahead.stmts] : chunk.stmts);
  if (ahead) ahead.keep(res.slice(chunk.stmts.length));
  return chunk.read(fx, res.slice(0, chunk.stmts.length));
}

/** What unfanOut took out: the feed entries (a boost of the status is its own entry, with its own id). */
export interface FeedRemoval {
  home: { accountId: string; statusId: string }[];
  lists: { listId: string; accountId: string; statusId: string }[];
}

/**
 * The feed entries of a status and of its boosts (home feeds, and list feeds with their owners), as one statement.
 * Put it in a batch before statements that delete those rows (deleting a status, undoing a boost) to learn who had
 * it; toFeedRemoval reads its rows.
 */
export function feedEntriesStatement(db: DB, statusId: string) {
  const S = padId(statusId);
  return db.all<FeedEntryRow>(sql`SELECT h.account_id AS account_id, NULL AS list_id, h.status_id AS status_id FROM home_feed h WHERE h.status_id = ${S}
    UNION ALL SELECT h.account_id, NULL, h.status_id FROM home_feed h WHERE h.reblog_of_id = ${S}
    UNION ALL SELECT l.account_id, lf.list_id, lf.status_id FROM list_feed lf JOIN lists l ON l.id = lf.list_id WHERE lf.status_id = ${S}
    UNION ALL SELECT l.account_id, lf.list_id, lf.status_id FROM list_feed lf JOIN lists l ON l.id = lf.list_id WHERE lf.reblog_of_id = ${S}`);
}

export interface FeedEntryRow {
  account_id: string;
  list_id: string | null;
  status_id: string;
}

export function toFeedRemoval(rows: FeedEntryRow[]): FeedRemoval {
  const out: FeedRemoval = { home: [], lists: [] };
  for (const r of rows) {
    const accountId = unpadId(String(r.account_id));
    const statusId = unpadId(String(r.status_id));
    if (r.list_id == null) out.home.push({ accountId, statusId });
    else out.lists.push({ listId: unpadId(String(r.list_id)), accountId, statusId });
  }
  return out;
}

/** Removes a deleted status (or undone reblog) from every feed, and boosts of it with it. One D1 batch. */
export async function unfanOut(db: DB, statusId: string): Promise<FeedRemoval> {
  const S = padId(statusId);
  const res = await db.batch([
    // Who loses an entry (read before the deletes, in the same transaction).
    feedEntriesStatement(db, statusId),
    db.run(sql`DELETE FROM home_feed WHERE status_id = ${S}`),
    db.run(sql`DELETE FROM home_feed WHERE reblog_of_id = ${S}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id = ${S}`),
    db.run(sql`DELETE FROM list_feed WHERE reblog_of_id = ${S}`),
  ]);
  return toFeedRemoval(res[0] as FeedEntryRow[]);
}
