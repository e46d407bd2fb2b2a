// What a publish of statuses carries, read and rendered ONCE for every stream and viewer: one D1 batch loads the
// statuses without a viewer (entities/statuses/status.ts) together with the facts of every connected viewer the
// fan-out reached (favourited, reblogged, bookmarked, muted conversation, poll votes, follows for quote approval,
// blocked by the author, has filters). From it come the shared streams' signed-out renderings (shared-render.ts) and
// the account streams' viewer-free rendering (AccountPart), which each account's hub completes for its viewer
// (viewer-state.ts accountPayloadFor), as Mastodon renders a new status once and hydrates it per follower
// (StatusCacheHydrator). A hub makes no D1 read for it, unless its viewer has filters it has not cached yet.
import { sql } from "drizzle-orm";
import { type DB, runBatch, type Statement } from "../db/client";
import { idsJson } from "../db/id-list";
import { renderStatusFrom, type StatusBundle, statusBundleRead } from "../entities/statuses/status";
import { QUOTE_FLAGS, quotePolicyFor } from "../entities/statuses/quote";
import type { Config } from "../env";
import { unpadId } from "../lib/text/ids";
import { searchableText } from "../policy/filter-match";
import { entry, type AccountPart, type ViewerFacts } from "./protocol";
import { type SharedPart, sharedPartsFrom } from "./shared-render";

/** A status to publish: on shared streams (`shared`: its first fan-out chunk) and to these accounts' streams. */
export interface PartRequest {
  statusId: string;
  cfg: Config;
  shared: boolean;
  /** Connected accounts whose account streams get it. */
  accounts: readonly string[];
}

export interface StatusParts {
  shared: Map<string, SharedPart>;
  account: Map<string, AccountPart>;
  /** status id → account → its facts (only accounts with at least one). */
  facts: Map<string, Map<string, ViewerFacts>>;
}

/** QUOTE_FLAGS.followers in either half of quote_approval_policy: whether following the author changes the answer. */
const FOLLOWERS_POLICY = (QUOTE_FLAGS.followers << 16) | QUOTE_FLAGS.followers;
/** Stands for a viewer other than the author in quotePolicyFor (any id that is not an account's). */
const SOMEONE = "-";

/**
 * The shared parts (for `listened` keys) and account parts of the requests, and the facts of their accounts: one D1
 * batch for all, none when there is nothing to render.
 */
export async function statusParts(db: DB, requests: readonly PartRequest[], listened: readonly string[]): Promise<StatusParts> {
  const read = statusPartsRead(db, requests, listened);
  return read ? read.parts(await runBatch(db, read.stmts)) : emptyParts();
}

const emptyParts = (): StatusParts => ({ shared: new Map(), account: new Map(), facts: new Map() });

/**
 * statusParts as statements to run in a batch of the caller's (a write batch's end: read-ahead.ts publishReadAhead), and
 * what makes the parts of their results; null when there is nothing to render. `related`: the statuses the requested
 * ones boost or quote, when the caller knows them all (loadStatusBundle's: it saves a statement finding them).
 */
export function statusPartsRead(
  db: DB,
  requests: readonly PartRequest[],
  listened: readonly string[],
  related?: readonly string[],
): { stmts: Statement[]; parts: (res: readonly unknown[]) => Promise<StatusParts> } | null {
  const forShared = listened.length ? requests.filter((r) => r.shared) : [];
  const forAccounts = requests.filter((r) => r.accounts.length);
  if (!forShared.length && !forAccounts.length) return null;
  const targets = [...new Set(forAccounts.flatMap((r) => r.accounts))];
  const ids = [...new Set([...forShared, ...forAccounts].map((r) => r.statusId))];
  const read = statusBundleRead(
    db,
    ids,
    null,
    related,
    targets.length
      ? viewerFactsStatement(
          db,
          forAccounts.map((r) => r.statusId),
          targets,
          Date.now(),
        )
      : undefined,
  );
  return {
    stmts: read.stmts,
    parts: async (res) => {
      const b = await read.bundle(res);
      const out = emptyParts();
      out.shared = sharedPartsFrom(b, forShared, listened);
      for (const r of forAccounts) {
        const part = accountPartOf(b, r.statusId, r.cfg);
        if (part) out.account.set(r.statusId, part);
      }
      out.facts = factsOf((b.extra ?? []) as FactRow[]);
      return out;
    },
  };
}

/**
 * The status rendered for no viewer, to be completed per viewer; null when its hubs must render it themselves: it or
 * the status it boosts quotes another (the quote's state and visibility depend on the viewer), or it is not there.
 */
export function accountPartOf(b: StatusBundle, statusId: string, cfg: Config): AccountPart | null {
  const s = b.statuses.get(statusId);
  if (!s) return null;
  const proper = s.reblogOfId ? b.statuses.get(s.reblogOfId) : s;
  if (!proper || b.quotes.has(s.id) || b.quotes.has(proper.id)) return null;
  const rendered = renderStatusFrom(cfg, b, statusId, { access: "delivered" });
  if (!rendered) return null;
  const restricted = [...new Set([s, proper])]
    .filter((x) => x.visibility !== "public" && x.visibility !== "unlisted")
    .map((x) => ({ mentioned: [...(b.mentionIds.get(x.id) ?? [])], followers: x.visibility === "private" }));
  return {
    ...(restricted.length ? { restricted } : {}),
    payload: JSON.stringify(rendered),
    direct: s.visibility === "direct",
    authors: [...new Set([s.accountId, proper.accountId])],
    filterText: searchableText(
      proper,
      (b.media.get(proper.id) ?? []).map((m) => m.description),
      b.polls.get(proper.id)?.options ?? null,
    ),
    filterIds: s.reblogOfId ? [s.id, s.reblogOfId] : [s.id],
    quoteApproval: [quotePolicyFor(proper, SOMEONE, true), quotePolicyFor(proper, SOMEONE, false)],
  };
}

/** A viewer's facts for one status, as the statement reads them (only rows with one of them true). */
interface FactRow {
  s: string;
  a: string;
  f: number;
  r: number;
  b: number;
  m: number;
  /** The viewer's poll choices (JSON), null without a poll. */
  v: string | null;
  o: number;
  k: number;
  c: number;
}

/**
 * What each of `targets` has done with each status (its boosted status for a boost), whether its author blocks them
 * and whether they have active filters, as REST's rendering for that viewer reads them (status.ts statusHead's
 * viewer columns): an index seek per target, status and fact (one that finds nothing reads no row), rows only for
 * viewers with one of them true.
 */
export function viewerFactsStatement(db: DB, statusIds: readonly string[], targets: readonly string[], now: number) {
  return db.all<FactRow>(sql`WITH t(a) AS (SELECT value FROM json_each(${idsJson(targets)})),
    q(id, pid, conv, poll, author, booster, policy, private) AS (SELECT x.id, y.id, y.conversation_id, y.poll_id, y.account_id,
      x.account_id, y.quote_approval_policy, y.visibility = 'private' OR x.visibility = 'private'
      FROM statuses x JOIN statuses y ON y.id = COALESCE(x.reblog_of_id, x.id)
      WHERE x.id IN (SELECT value FROM json_each(${idsJson(statusIds)})))
    SELECT * FROM (SELECT q.id AS s, t.a AS a,
      EXISTS (SELECT 1 FROM favourites xf WHERE xf.account_id = t.a AND xf.status_id = q.pid) AS f,
      EXISTS (SELECT 1 FROM statuses xr WHERE xr.reblog_of_id = q.pid AND xr.account_id = t.a) AS r,
      EXISTS (SELECT 1 FROM bookmarks xb WHERE xb.account_id = t.a AND xb.status_id = q.pid) AS b,
      EXISTS (SELECT 1 FROM conversation_mutes xm WHERE xm.account_id = t.a AND xm.conversation_id = q.conv) AS m,
      CASE WHEN q.poll IS NOT NULL THEN (SELECT json_group_array(xv.choice) FROM poll_votes xv WHERE xv.account_id = t.a AND xv.poll_id = q.poll) END AS v,
      CASE WHEN (q.policy & ${FOLLOWERS_POLICY}) <> 0 OR q.private
        THEN EXISTS (SELECT 1 FROM follows xo WHERE xo.account_id = t.a AND xo.target_account_id = q.author) ELSE 0 END AS o,
      EXISTS (SELECT 1 FROM blocks xk WHERE xk.account_id IN (q.author, q.booster) AND xk.target_account_id = t.a) AS k,
      EXISTS (SELECT 1 FROM custom_filters xc WHERE xc.account_id = t.a AND (xc.expires_at IS NULL OR xc.expires_at > ${now})) AS c
    FROM t CROSS JOIN q) WHERE f OR r OR b OR m OR v <> '[]' OR o OR k OR c`);
}

/** The facts' rows by status and account. */
function factsOf(rows: FactRow[]): Map<string, Map<string, ViewerFacts>> {
  const out = new Map<string, Map<string, ViewerFacts>>();
  for (const row of rows) {
    const f: ViewerFacts = {};
    if (row.f) f.favourited = true;
    if (row.r) f.reblogged = true;
    if (row.b) f.bookmarked = true;
    if (row.m) f.muted = true;
    if (row.o) f.follows = true;
    if (row.k) f.blockedBy = true;
    if (row.c) f.filters = true;
    const votes = row.v ? (JSON.parse(row.v) as number[]).map(Number).sort((x, y) => x - y) : [];
    if (votes.length) f.votes = votes;
    entry(out, unpadId(String(row.s)), () => new Map<string, ViewerFacts>()).set(unpadId(String(row.a)), f);
  }
  return out;
}

/** An account's facts for a status (undefined: none of them). */
export function factsFor(parts: StatusParts, statusId: string, accountId: string): ViewerFacts | undefined {
  return parts.facts.get(statusId)?.get(accountId);
}
