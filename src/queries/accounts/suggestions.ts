// Follow suggestions (Mastodon's AccountSuggestions): accounts the viewer's follows follow (friends_of_friends), then
// the local accounts most followed (most_followed). Only discoverable, active accounts the viewer does not follow,
// has not asked to follow, has not dismissed, blocks, mutes or is blocked by. One query.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { padId, unpadId } from "../../lib/text/ids";

export type SuggestionSource = "friends_of_friends" | "most_followed";

export interface SuggestionRow {
  accountId: string;
  sources: SuggestionSource[];
}

/** How many candidates of each source are considered before the filters (keeps the query bounded). */
const CANDIDATES = 400;

export async function suggestionsFor(db: DB, viewerId: string, limit: number): Promise<SuggestionRow[]> {
  const v = padId(viewerId);
  const now = Date.now();
  const rows = await db.all<{ id: string; sources: string }>(sql`
    WITH fof AS (
      SELECT f2.target_account_id AS id, count(*) AS score FROM follows f1 JOIN follows f2 ON f2.account_id = f1.target_account_id
      WHERE f1.account_id = ${v} GROUP BY f2.target_account_id ORDER BY score DESC LIMIT ${CANDIDATES}),
    popular AS (
      SELECT id, followers_count AS score FROM accounts WHERE domain IS NULL AND followers_count > 0
      ORDER BY followers_count DESC LIMIT ${CANDIDATES}),
    candidates AS (
      SELECT id, 'friends_of_friends' AS source, 0 AS tier, score FROM fof
      UNION ALL SELECT id, 'most_followed', 1, score FROM popular)
    SELECT c.id AS id, group_concat(c.source) AS sources
    FROM candidates c JOIN accounts a ON a.id = c.id
    LEFT JOIN users u ON u.account_id = a.id
    WHERE c.id <> ${v} AND a.discoverable = 1 AND a.suspended_at IS NULL AND a.silenced_at IS NULL
      AND a.moved_to_account_id IS NULL AND a.memorial = 0
      AND (a.domain IS NOT NULL OR (u.id IS NOT NULL AND u.approved = 1 AND u.disabled = 0 AND u.confirmed_at IS NOT NULL))
      AND NOT EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${v} AND f.target_account_id = c.id)
      AND NOT EXISTS (SELECT 1 FROM follow_requests r WHERE r.account_id = ${v} AND r.target_account_id = c.id)
      AND NOT EXISTS (SELECT 1 FROM suggestion_dismissals d WHERE d.account_id = ${v} AND d.target_account_id = c.id)
      AND NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = ${v} AND b.target_account_id = c.id) OR (b.account_id = c.id AND b.target_account_id = ${v}))
      AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = ${v} AND m.target_account_id = c.id AND (m.expires_at IS NULL OR m.expires_at > ${now}))
      AND (a.domain IS NULL OR NOT EXISTS (SELECT 1 FROM account_domain_blocks db WHERE db.account_id = ${v} AND db.domain = a.domain))
    GROUP BY c.id
    ORDER BY min(c.tier), max(c.score) DESC, c.id
    LIMIT ${limit}`);
  return rows.map((r) => ({ accountId: unpadId(String(r.id)), sources: String(r.sources).split(",") as SuggestionSource[] }));
}
