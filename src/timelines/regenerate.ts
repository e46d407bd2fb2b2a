import type { DB } from "../db/client";
import { padId } from "../lib/text/ids";
import { boundSql } from "../db/bound-sql";
import { feedFilter, MAX_FEED_ITEMS } from "./feed-filter";
import { trimHomeFeedsSql } from "./fanout";

/** Statuses taken per followed account (Mastodon takes MAX_ITEMS / 4 per account, then keeps the newest 800). */
export const REGENERATE_PER_ACCOUNT = 40;

export async function regenerateHomeFeed(db: DB, accountId: string): Promise<void> {
  if (!/^\d{1,19}$/.test(accountId)) return;
  const now = Date.now();
  const F = "$f";
  const params = { f: padId(accountId), now };
  const filter = feedFilter({ receiver: F, follow: "f", dedupe: { table: "home_feed", key: F } });
  await db.batch([
    // Cleared first: fan-out resumes for this feed from here on, and nothing written meanwhile is lost.
    db.run(
      boundSql(
        `INSERT INTO feed_states (account_id, dropped_at, regenerated_at) VALUES (${F}, NULL, $now)
      ON CONFLICT(account_id) DO UPDATE SET dropped_at = NULL, regenerated_at = excluded.regenerated_at`,
        params,
      ),
    ),
    db.run(
      boundSql(
        `INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id)
      SELECT ${F}, s.id, s.reblog_of_id, s.account_id
      FROM (SELECT target_account_id AS target FROM follows WHERE account_id = ${F} UNION SELECT ${F}) t
      JOIN statuses s ON s.account_id = t.target AND s.id >= coalesce(
        (SELECT x.id FROM statuses x WHERE x.account_id = t.target ORDER BY x.id DESC LIMIT 1 OFFSET ${REGENERATE_PER_ACCOUNT - 1}), '')
      LEFT JOIN statuses o ON o.id = s.reblog_of_id
      LEFT JOIN follows f ON f.account_id = ${F} AND f.target_account_id = s.account_id
      WHERE s.visibility IN ('public','unlisted','private') AND ${filter}
      ORDER BY s.id DESC LIMIT ${MAX_FEED_ITEMS}`,
        params,
      ),
    ),
    db.run(boundSql(trimHomeFeedsSql(`SELECT ${F} AS id`), params)),
  ]);
}
