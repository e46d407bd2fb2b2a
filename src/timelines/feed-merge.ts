// Follow → merge the target's recent statuses into the follower's home feed; unfollow, block or mute → take the
// target's entries out of the home feed and of the account's list feeds (Mastodon's merge_into_home and
// unmerge_from_home / clear_from_lists).
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { padId } from "../lib/text/ids";
import { boundSql } from "../db/bound-sql";
import { feedFilter } from "./feed-filter";
import { LIST_REPLIES_RULE, trimHomeFeedsSql, trimListFeedsSql } from "./fanout";

/** How many of the target's newest statuses a follow brings into the feed. */
export const MERGE_LIMIT = 40;

const digits = (id: string) => /^\d{1,19}$/.test(id);

/** The target's newest statuses a follower may see (`s`, with its boosted status `o`), as a FROM fragment. */
const RECENT_OF_TARGET = `(SELECT * FROM statuses WHERE account_id = $t AND visibility IN ('public','unlisted','private') ORDER BY id DESC LIMIT ${MERGE_LIMIT}) s
      LEFT JOIN statuses o ON o.id = s.reblog_of_id`;

/** One batch: the insert of the target's recent statuses into a feed, then that feed's trim. */
async function mergeRecent(db: DB, params: Record<string, string | number>, insert: string, trim: string): Promise<void> {
  await db.batch([db.run(boundSql(insert, params)), db.run(boundSql(trim, params))]);
}

export async function mergeIntoHome(db: DB, accountId: string, targetAccountId: string): Promise<void> {
  if (!digits(accountId) || !digits(targetAccountId)) return;
  const filter = feedFilter({ receiver: "$f", follow: "f", dedupe: { table: "home_feed", key: "$f" }, skipDropped: true });
  await mergeRecent(
    db,
    { f: padId(accountId), t: padId(targetAccountId), now: Date.now() },
    `INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
      SELECT f.account_id, s.id, s.reblog_of_id, s.account_id
      FROM follows f JOIN ${RECENT_OF_TARGET}
      WHERE f.account_id = $f AND f.target_account_id = $t AND ${filter}`,
    trimHomeFeedsSql("SELECT $f AS id"),
  );
}

/**
 * An account added to a list: its newest statuses the list would have shown go into the list's feed, by the same
 * rules as fan-out (the owner follows the author, the replies policy, the owner's feed filters), as Mastodon fills a
 * list when an account is added.
 */
export async function mergeIntoList(db: DB, listId: string, targetAccountId: string): Promise<void> {
  if (!digits(listId) || !digits(targetAccountId)) return;
  const filter = feedFilter({ receiver: "l.account_id", follow: "lf", dedupe: { table: "list_feed", key: "l.id" } });
  await mergeRecent(
    db,
    { l: padId(listId), t: padId(targetAccountId), now: Date.now() },
    `INSERT OR IGNORE INTO list_feed (list_id, status_id, reblog_of_id, author_id)
      SELECT l.id, s.id, s.reblog_of_id, s.account_id
      FROM lists l
      JOIN list_accounts la ON la.list_id = l.id AND la.account_id = $t
      JOIN follows lf ON lf.account_id = l.account_id AND lf.target_account_id = $t
      JOIN ${RECENT_OF_TARGET}
      WHERE l.id = $l AND ${LIST_REPLIES_RULE} AND ${filter}`,
    trimListFeedsSql("SELECT $l AS id"),
  );
}

/**
 * Takes an author's entries out of a home feed and the owner's list feeds (an unfollow, a mute, a block). The home feed
 * is walked by its key (account, status): at most its ~800 entries (MAX_FEED_ITEMS) read once per unfollow, where an
 * (account, author) index cost a row written with every entry ever fanned out (migrations/0060).
 */
export async function unmergeFromHome(db: DB, accountId: string, targetAccountId: string): Promise<void> {
  const F = padId(accountId);
  const T = padId(targetAccountId);
  await db.batch([
    db.run(sql`DELETE FROM home_feed WHERE account_id = ${F} AND author_id = ${T}`),
    db.run(sql`DELETE FROM list_feed WHERE author_id = ${T} AND list_id IN (SELECT id FROM lists WHERE account_id = ${F})`),
  ]);
}
