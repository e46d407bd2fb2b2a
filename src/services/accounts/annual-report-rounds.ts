// Generating an annual report (Mastodon's AnnualReport and its sources), in bounded rounds run by the `annual_report`
// effect. Each round reads at most ROUND_STATUSES of the account's statuses of the year (the (account_id, id) index,
// a range of snowflakes), or ROUND_ACCOUNTS local accounts for the percentiles, adds what it read to the running totals
// kept on the report's row, and writes them with the cursor in ONE compare-and-set statement: a round run twice (a
// retry after its write committed) finds the cursor moved and does nothing. The last round writes the report.
//
// Phases: `statuses` (archetype counts, statuses per month, top statuses, hashtags), `follows` (new follows and
// followers per month: the account's own rows), `percentiles` (each local account's statuses and new followers of the
// year, compared with this account's), then `data` is written and the row becomes available.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { annualReports } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { AnnualReportData, Archetype } from "../../entities/accounts/annual-report";
import { padId, snowflakeFloor, unpadId } from "../../lib/text/ids";

/** Statuses read by one round of the `statuses` phase. */
export const ROUND_STATUSES = 500;
/** Local accounts compared by one round of the `percentiles` phase. */
export const ROUND_ACCOUNTS = 50;
/** Distinct hashtags kept while counting; past it the least used go (a report lists the 40 most used). */
const MAX_TAGS = 1_000;
const TOP_HASHTAGS = 40;
/** Average number of posts (replies and boosts included) of an active Mastodon user in 2023 (Mastodon's figure). */
const AVERAGE_PER_YEAR = 113;

/** A post that may be one of the year's top statuses, with its counts. */
interface Candidate {
  id: string;
  reblogs: number;
  favourites: number;
  replies: number;
}

/** The running totals a round hands to the next (JSON on the row). */
export interface Progress {
  phase: "statuses" | "follows" | "percentiles";
  standalone: number;
  replies: number;
  reblogs: number;
  polls: number;
  /** Statuses per month, index 0 = January. */
  statuses: number[];
  following: number[];
  followers: number[];
  /** Hashtag display name → uses. */
  tags: Record<string, number>;
  /** The best three public or unlisted posts by each count. */
  top: { reblogs: Candidate[]; favourites: Candidate[]; replies: Candidate[] };
  /** Local accounts with any statuses / new followers this year, and of those how many had fewer than this account. */
  withStatuses: number;
  fewerStatuses: number;
  withFollowers: number;
  fewerFollowers: number;
}

export const ANNUAL_REPORT_SCHEMA = 2;

const months = () => Array.from({ length: 12 }, () => 0);

export function emptyProgress(): Progress {
  return {
    phase: "statuses",
    standalone: 0,
    replies: 0,
    reblogs: 0,
    polls: 0,
    statuses: months(),
    following: months(),
    followers: months(),
    tags: {},
    top: { reblogs: [], favourites: [], replies: [] },
    withStatuses: 0,
    fewerStatuses: 0,
    withFollowers: 0,
    fewerFollowers: 0,
  };
}

/** The first and last snowflake of a UTC year, padded for comparison with stored ids. */
export function yearIdRange(year: number): { lo: string; hi: string } {
  const lo = snowflakeFloor(Date.UTC(year, 0, 1));
  const hi = (BigInt(snowflakeFloor(Date.UTC(year + 1, 0, 1))) - 1n).toString();
  return { lo: padId(lo), hi: padId(hi) };
}

interface StatusRow {
  id: string;
  month: number;
  reblog: number;
  reply: number;
  selfReply: number;
  poll: number;
  distributable: number;
  reblogs: number;
  favourites: number;
  replies: number;
}

/** Runs the next round of the account's report for the year; records the round after it while work is left. */
export async function runAnnualReportRound(db: DB, fx: Effects, accountId: string, year: number): Promise<void> {
  const [row] = await db
    .select()
    .from(annualReports)
    .where(and(eq(annualReports.accountId, accountId), eq(annualReports.year, year)))
    .limit(1);
  if (row?.state !== "generating") return;
  const progress = (row.progress as Progress | null) ?? emptyProgress();
  const step = await nextStep(db, accountId, year, progress, row.cursor);
  const now = Date.now();
  const cursorWas = row.cursor === null ? isNull(annualReports.cursor) : eq(annualReports.cursor, row.cursor);
  const mine = and(eq(annualReports.accountId, accountId), eq(annualReports.year, year), eq(annualReports.state, "generating"), cursorWas);
  const written = step.done
    ? await db
        .update(annualReports)
        .set({ state: "available", data: reportData(step.progress), progress: null, cursor: null, updatedAt: now })
        .where(mine)
        .returning({ year: annualReports.year })
    : await db.update(annualReports).set({ progress: step.progress, cursor: step.cursor, updatedAt: now }).where(mine).returning({ year: annualReports.year });
  // Nothing written: another run of this round got there first, and it records the next one.
  if (written.length && !step.done) fx.add({ type: "annual_report", accountId, year });
}

/** What one round read: the totals after it, where the next one starts, or that the report is complete. */
interface Step {
  progress: Progress;
  cursor: string | null;
  done: boolean;
}

async function nextStep(db: DB, accountId: string, year: number, p: Progress, cursor: string | null): Promise<Step> {
  const a = padId(accountId);
  const { lo, hi } = yearIdRange(year);
  if (p.phase === "statuses") {
    const after = cursor ? padId(cursor) : null;
    const from = after ?? lo;
    const page = sql`SELECT id FROM statuses WHERE account_id = ${a} AND id ${after ? sql`>` : sql`>=`} ${from} AND id <= ${hi}
      ORDER BY id LIMIT ${ROUND_STATUSES}`;
    const [rows, tags] = await db.batch([
      db.all<StatusRow>(sql`SELECT id,
          CAST(strftime('%m', (CAST(id AS INTEGER) >> 16) / 1000, 'unixepoch') AS INTEGER) AS month,
          reblog_of_id IS NOT NULL AS reblog,
          in_reply_to_id IS NOT NULL AS reply,
          coalesce(in_reply_to_account_id = account_id, 0) AS selfReply,
          poll_id IS NOT NULL AS poll,
          visibility IN ('public', 'unlisted') AS distributable,
          reblogs_count AS reblogs, favourites_count AS favourites, replies_count AS replies
        FROM statuses WHERE id IN (${page}) ORDER BY id`),
      db.all<{ name: string; n: number }>(sql`SELECT t.display_name AS name, count(*) AS n
        FROM status_tags st JOIN tags t ON t.id = st.tag_id
        WHERE st.status_id IN (${page}) GROUP BY st.tag_id`),
    ]);
    const next = countStatuses(p, rows, tags);
    const last = rows[rows.length - 1];
    if (rows.length === ROUND_STATUSES && last) return { progress: next, cursor: unpadId(last.id), done: false };
    return { progress: { ...next, phase: "follows" }, cursor: "follows", done: false };
  }
  if (p.phase === "follows") {
    const start = Date.UTC(year, 0, 1);
    const end = Date.UTC(year + 1, 0, 1);
    const [following, followers] = await db.batch([
      db.all<{ month: number; n: number }>(sql`SELECT CAST(strftime('%m', created_at / 1000, 'unixepoch') AS INTEGER) AS month, count(*) AS n
        FROM follows WHERE account_id = ${a} AND created_at >= ${start} AND created_at < ${end} GROUP BY month`),
      db.all<{ month: number; n: number }>(sql`SELECT CAST(strftime('%m', (CAST(id AS INTEGER) >> 16) / 1000, 'unixepoch') AS INTEGER) AS month,
          count(*) AS n
        FROM follows WHERE target_account_id = ${a} AND id >= ${lo} AND id <= ${hi} GROUP BY month`),
    ]);
    const next = { ...p, following: byMonth(following), followers: byMonth(followers), phase: "percentiles" as const };
    return { progress: next, cursor: padId("0"), done: false };
  }
  // percentiles: local accounts in id order, ROUND_ACCOUNTS a round, each account's year counted through its indexes
  const after = cursor ?? padId("0");
  const rows = await db.all<{ id: string; statuses: number; followers: number }>(sql`SELECT u.account_id AS id,
      (SELECT count(*) FROM statuses s WHERE s.account_id = u.account_id AND s.id >= ${lo} AND s.id <= ${hi}) AS statuses,
      (SELECT count(*) FROM follows f WHERE f.target_account_id = u.account_id AND f.id >= ${lo} AND f.id <= ${hi}) AS followers
    FROM users u WHERE u.account_id > ${after} ORDER BY u.account_id LIMIT ${ROUND_ACCOUNTS}`);
  const myStatuses = p.statuses.reduce((x, y) => x + y, 0);
  const myFollowers = p.followers.reduce((x, y) => x + y, 0);
  const next = { ...p };
  for (const r of rows) {
    if (r.statuses > 0) {
      next.withStatuses++;
      if (r.statuses < myStatuses) next.fewerStatuses++;
    }
    if (r.followers > 0) {
      next.withFollowers++;
      if (r.followers < myFollowers) next.fewerFollowers++;
    }
  }
  const last = rows[rows.length - 1];
  if (rows.length === ROUND_ACCOUNTS && last) return { progress: next, cursor: last.id, done: false };
  return { progress: next, cursor: null, done: true };
}

function byMonth(rows: { month: number; n: number }[]): number[] {
  const out = months();
  for (const r of rows) if (r.month >= 1 && r.month <= 12) out[r.month - 1] = Number(r.n);
  return out;
}

/** Adds one round's statuses and their hashtags to the totals. */
export function countStatuses(p: Progress, rows: StatusRow[], tags: { name: string; n: number }[]): Progress {
  const next: Progress = { ...p, statuses: [...p.statuses], tags: { ...p.tags }, top: { ...p.top } };
  for (const r of rows) {
    const month = Number(r.month);
    if (month >= 1 && month <= 12) next.statuses[month - 1] = (next.statuses[month - 1] ?? 0) + 1;
    if (r.reblog) next.reblogs++;
    else if (r.reply && !r.selfReply) next.replies++;
    else next.standalone++;
    if (r.poll) next.polls++;
    // Boosts have no counts of their own; Mastodon picks top posts among public and unlisted ones.
    if (!r.reblog && r.distributable) {
      const c = { id: unpadId(r.id), reblogs: Number(r.reblogs), favourites: Number(r.favourites), replies: Number(r.replies) };
      for (const k of ["reblogs", "favourites", "replies"] as const) next.top[k] = keepBest([...next.top[k], c], k);
    }
  }
  for (const t of tags) next.tags[t.name] = (next.tags[t.name] ?? 0) + Number(t.n);
  const names = Object.keys(next.tags);
  if (names.length > MAX_TAGS) {
    const kept = names.sort((x, y) => (next.tags[y] ?? 0) - (next.tags[x] ?? 0)).slice(0, MAX_TAGS);
    next.tags = Object.fromEntries(kept.map((n) => [n, next.tags[n] ?? 0]));
  }
  return next;
}

/** The three best by one count; a tie goes to the newer post. */
function keepBest(list: Candidate[], k: "reblogs" | "favourites" | "replies"): Candidate[] {
  return list.sort((x, y) => y[k] - x[k] || (BigInt(y.id) > BigInt(x.id) ? 1 : -1)).slice(0, 3);
}

/** Mastodon's archetype rule, on the year's counts. */
export function archetypeOf(p: Pick<Progress, "standalone" | "replies" | "reblogs" | "polls">): Archetype {
  if (p.standalone + p.replies + p.reblogs < AVERAGE_PER_YEAR) return "lurker";
  if (p.reblogs > p.standalone * 2) return "booster";
  if (p.polls > p.standalone * 0.1) return "pollster";
  if (p.replies > p.standalone * 2) return "replier";
  return "oracle";
}

export function reportData(p: Progress): AnnualReportData {
  const byReblogs = p.top.reblogs[0]?.id ?? null;
  const byFavourites = p.top.favourites.find((c) => c.id !== byReblogs)?.id ?? null;
  const byReplies = p.top.replies.find((c) => c.id !== byReblogs && c.id !== byFavourites)?.id ?? null;
  const top = Object.entries(p.tags)
    .filter(([, n]) => n > 1)
    .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
    .slice(0, TOP_HASHTAGS);
  const total = p.standalone + p.replies + p.reblogs;
  return {
    archetype: archetypeOf(p),
    time_series: p.statuses.map((n, i) => ({ month: i + 1, statuses: n, following: p.following[i] ?? 0, followers: p.followers[i] ?? 0 })),
    top_hashtags: top.map(([name, count]) => ({ name, count })),
    top_statuses: { by_reblogs: byReblogs, by_favourites: byFavourites, by_replies: byReplies },
    percentiles: {
      followers: (p.fewerFollowers / (p.withFollowers + 1)) * 100,
      statuses: (p.fewerStatuses / (p.withStatuses + 1)) * 100,
    },
    type_distribution: { total, reblogs: p.reblogs, replies: p.replies, standalone: p.standalone },
  };
}
