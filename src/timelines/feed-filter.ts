// Who gets a status in a materialised feed: Mastodon's FeedManager#filter_from_home as ONE SQL condition, so that
// fan-out, merge and regeneration insert with INSERT ... SELECT (no per-recipient round trips) and agree on the rules.
//
// The condition reads these aliases from the surrounding statement:
//   s   the status entering the feed (a reblog row for boosts)
//   o   LEFT JOIN statuses o ON o.id = s.reblog_of_id (null for non-reblogs)
//   fol the receiver's follows row towards s's author (optional: tag followers and mentioned accounts have none)
// The fragment is SQL text with aliases (internal constants) and `$now`, a placeholder the caller binds through
// boundSql (db/bound-sql.ts). Its own aliases all start with ff_ so none can shadow one of the surrounding statement.

export interface FeedFilterOptions {
  /** SQL expression of the receiving account id. */
  receiver: string;
  /** Alias of the receiver's follows row (show_reblogs, languages), if there is one. */
  follow?: string;
  /** Mastodon's reply rule (tag feeds don't apply it). */
  replyRule?: boolean;
  /** Dedupe boosts against this feed: home_feed of the receiver, or list_feed of a list. */
  dedupe: { table: "home_feed"; key: string } | { table: "list_feed"; key: string };
  /** Skip receivers whose home feed was dropped for inactivity (it is rebuilt when they come back). */
  skipDropped?: boolean;
}

export function feedFilter(o: FeedFilterOptions): string {
  const F = o.receiver;
  const authors = `(s.account_id, o.account_id)`;
  const muteLive = `(ff_m.expires_at IS NULL OR ff_m.expires_at > $now)`;
  const parts = [
    `EXISTS (SELECT 1 FROM users ff_u WHERE ff_u.account_id = ${F})`,
    `NOT EXISTS (SELECT 1 FROM accounts ff_sa WHERE ff_sa.id = s.account_id AND ff_sa.suspended_at IS NOT NULL)`,
  ];
  if (o.skipDropped) parts.push(`NOT EXISTS (SELECT 1 FROM feed_states ff_fs WHERE ff_fs.account_id = ${F} AND ff_fs.dropped_at IS NOT NULL)`);

  // Rules that never apply to one's own statuses.
  const others = [
    `NOT EXISTS (SELECT 1 FROM blocks ff_b WHERE ff_b.account_id = ${F} AND ff_b.target_account_id IN ${authors})`,
    `NOT EXISTS (SELECT 1 FROM blocks ff_b WHERE ff_b.target_account_id = ${F} AND ff_b.account_id IN ${authors})`,
    `NOT EXISTS (SELECT 1 FROM mutes ff_m WHERE ff_m.account_id = ${F} AND ff_m.target_account_id IN ${authors} AND ${muteLive})`,
    `NOT EXISTS (SELECT 1 FROM account_domain_blocks ff_d JOIN accounts ff_x ON ff_x.domain = ff_d.domain WHERE ff_d.account_id = ${F} AND ff_x.id IN ${authors})`,
    // A status mentioning someone the receiver blocks or mutes stays out (Mastodon checks mentioned accounts too).
    `NOT EXISTS (SELECT 1 FROM mentions ff_mm WHERE ff_mm.status_id = coalesce(o.id, s.id) AND ff_mm.account_id <> ${F} AND (
       EXISTS (SELECT 1 FROM blocks ff_b WHERE ff_b.account_id = ${F} AND ff_b.target_account_id = ff_mm.account_id)
       OR EXISTS (SELECT 1 FROM mutes ff_m WHERE ff_m.account_id = ${F} AND ff_m.target_account_id = ff_mm.account_id AND ${muteLive})))`,
    // Members of the receiver's exclusive lists are shown in those lists only.
    `NOT EXISTS (SELECT 1 FROM list_accounts ff_la JOIN lists ff_l ON ff_l.id = ff_la.list_id WHERE ff_la.account_id = s.account_id AND ff_l.account_id = ${F} AND ff_l.exclusive = 1)`,
  ];
  if (o.replyRule !== false) {
    // A reply to someone else reaches a receiver who follows the replied-to account (or is it).
    others.push(`(s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id = s.account_id OR s.in_reply_to_account_id = ${F}
       OR EXISTS (SELECT 1 FROM follows ff_rf WHERE ff_rf.account_id = ${F} AND ff_rf.target_account_id = s.in_reply_to_account_id))`);
  }
  if (o.follow) {
    const f = o.follow;
    others.push(`(s.reblog_of_id IS NULL OR ${f}.show_reblogs = 1)`);
    others.push(`(${f}.languages IS NULL OR json_array_length(${f}.languages) = 0 OR coalesce(o.language, s.language) IS NULL
       OR EXISTS (SELECT 1 FROM json_each(${f}.languages) WHERE value = coalesce(o.language, s.language)))`);
  }
  parts.push(`(s.account_id = ${F} OR (${others.join("\n AND ")}))`);

  // Boosts: never of the receiver's own status, and once per feed (the original or another boost of it), whichever
  // of the original and its boosts arrived first.
  const d = o.dedupe;
  // Two probes (primary key, then the partial reblog index) rather than an OR that would walk the whole feed.
  const keyCol = d.table === "home_feed" ? "account_id" : "list_id";
  const dup = `(EXISTS (SELECT 1 FROM ${d.table} ff_h WHERE ff_h.${keyCol} = ${d.key} AND ff_h.status_id = s.reblog_of_id)
       OR EXISTS (SELECT 1 FROM ${d.table} ff_h WHERE ff_h.reblog_of_id = s.reblog_of_id AND ff_h.${keyCol} = ${d.key}))`;
  // An original that arrives after a boost of it (the boost's fan-out ran first, a merge, a late delivery) stays
  // out too: Mastodon's FeedManager#add_to_feed skips an original whose reblog is already in the feed.
  const boosted = `EXISTS (SELECT 1 FROM ${d.table} ff_h WHERE ff_h.reblog_of_id = s.id AND ff_h.${keyCol} = ${d.key})`;
  parts.push(`((s.reblog_of_id IS NULL AND (s.account_id = ${F} OR NOT ${boosted})) OR (o.id IS NOT NULL AND o.account_id <> ${F} AND NOT ${dup}))`);
  return parts.join("\n AND ");
}

/** Mastodon's FeedManager::MAX_ITEMS: a feed keeps its newest 800 entries. */
export const MAX_FEED_ITEMS = 800;
