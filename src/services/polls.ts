// Polls: validation of a new poll (security A5), reading one, and voting (one batch, race-safe counters).
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { polls, pollVotes, statuses } from "../db/schema";
import { renderPoll } from "../entities/poll";
import { notFound, validationFailed } from "../lib/errors";
import { padId, snowflake } from "../lib/ids";
import { cleanText } from "../lib/text";
import { statusReadableBy } from "./visibility";

export const POLL_MAX_OPTIONS = 4;
export const POLL_MAX_OPTION_CHARS = 50;
export const POLL_MIN_EXPIRATION = 300;
export const POLL_MAX_EXPIRATION = 2_629_746;

export type PollRow = typeof polls.$inferSelect;

export interface PollInput {
  options?: string[];
  expires_in?: number;
  multiple?: boolean;
  hide_totals?: boolean;
}

export interface ValidPoll {
  options: string[];
  expiresAt: number;
  multiple: boolean;
  hideTotals: boolean;
}

export function validatePoll(p: PollInput, now = Date.now()): ValidPoll {
  const options = (p.options ?? []).map((o) => cleanText(o).trim());
  if (options.length < 2) throw validationFailed("Poll options must have more than one item");
  if (options.length > POLL_MAX_OPTIONS) throw validationFailed(`Poll options can't contain more than ${POLL_MAX_OPTIONS} items`);
  if (options.some((o) => o === "")) throw validationFailed("Poll options can't be blank");
  if (options.some((o) => [...o].length > POLL_MAX_OPTION_CHARS)) {
    throw validationFailed(`Poll options cannot be longer than ${POLL_MAX_OPTION_CHARS} characters each`);
  }
  if (new Set(options).size !== options.length) throw validationFailed("Poll options contain duplicate items");
  const exp = p.expires_in;
  if (exp === undefined) throw validationFailed("Poll expires at can't be blank");
  if (exp < POLL_MIN_EXPIRATION) throw validationFailed("Poll expires at is too soon");
  if (exp > POLL_MAX_EXPIRATION) throw validationFailed("Poll expires at is too far into the future");
  return { options, expiresAt: now + exp * 1000, multiple: !!p.multiple, hideTotals: !!p.hide_totals };
}

export function newPollRow(id: string, statusId: string, accountId: string, p: ValidPoll, now = Date.now()): PollRow {
  return {
    id,
    statusId,
    accountId,
    options: p.options,
    votesPerOption: p.options.map(() => 0),
    multiple: p.multiple,
    hideTotals: p.hideTotals,
    votesCount: 0,
    votersCount: 0,
    expiresAt: p.expiresAt,
    createdAt: now,
    updatedAt: now,
  };
}

/** The poll and the viewer's votes, when the poll's status is visible to the viewer (one round trip). */
async function loadPoll(db: DB, pollId: string, viewerId: string | null) {
  const [rows, votes] = await db.batch([
    db
      // Aliased: D1 batch rows are keyed by column name, and polls has its own account_id.
      .select({ poll: polls, authorId: sql`${statuses.accountId}`.mapWith(statuses.accountId).as("author_id") })
      .from(polls)
      .innerJoin(statuses, eq(statuses.id, polls.statusId))
      .where(and(eq(polls.id, pollId), statusReadableBy(viewerId)))
      .limit(1),
    db
      .select({ choice: pollVotes.choice })
      .from(pollVotes)
      .where(and(eq(pollVotes.pollId, pollId), eq(pollVotes.accountId, viewerId ?? "0"))),
  ]);
  const r = rows[0];
  if (!r) throw notFound();
  return { poll: r.poll, authorId: r.authorId, ownVotes: votes.map((v) => v.choice) };
}

export async function showPoll(db: DB, pollId: string, viewerId: string | null) {
  const { poll, authorId, ownVotes } = await loadPoll(db, pollId, viewerId);
  return renderPoll(poll, viewerId ? ownVotes : null, viewerId === authorId);
}

export async function votePoll(db: DB, pollId: string, viewerId: string, rawChoices: number[]) {
  const { poll, authorId, ownVotes } = await loadPoll(db, pollId, viewerId);
  const now = Date.now();
  if (poll.expiresAt != null && poll.expiresAt <= now) throw validationFailed("The poll has already ended");
  if (authorId === viewerId) throw validationFailed("You cannot vote in your own poll");
  if (ownVotes.length > 0) throw validationFailed("You have already voted on this poll");
  const choices = [...new Set(rawChoices)];
  if (choices.length === 0) throw validationFailed("Choices can't be blank");
  if (!poll.multiple && choices.length > 1) throw validationFailed("You can only choose one option in this poll");
  if (choices.some((ch) => !Number.isInteger(ch) || ch < 0 || ch >= poll.options.length)) throw validationFailed("Choice is not a valid option");

  const rows = choices.map((choice) => [padId(snowflake(now)), choice]);
  const pv = padId(viewerId);
  const pp = padId(pollId);
  const firstVote = rows[0][0];
  // The INSERT ... SELECT reads poll_votes before writing, so two racing requests cannot both vote; the counters
  // move only when this request's rows are the ones that landed.
  const mine = sql`EXISTS (SELECT 1 FROM poll_votes WHERE id = ${firstVote})`;
  const bumps = choices.map((ch) =>
    db.run(sql`UPDATE polls SET votes_per_option = json_set(votes_per_option, ${`$[${ch}]`}, coalesce(json_extract(votes_per_option, ${`$[${ch}]`}), 0) + 1)
      WHERE id = ${pp} AND ${mine}`),
  );
  const res = await db.batch([
    db.run(sql`INSERT INTO poll_votes (id, poll_id, account_id, choice, created_at)
      SELECT json_extract(j.value, '$[0]'), ${pp}, ${pv}, json_extract(j.value, '$[1]'), ${now} FROM json_each(${JSON.stringify(rows)}) j
      WHERE NOT EXISTS (SELECT 1 FROM poll_votes WHERE poll_id = ${pp} AND account_id = ${pv})`),
    ...bumps,
    db.run(sql`UPDATE polls SET votes_count = votes_count + ${choices.length}, voters_count = voters_count + 1, updated_at = ${now}
      WHERE id = ${pp} AND ${mine}`),
    db.select().from(polls).where(eq(polls.id, pollId)).limit(1),
    db
      .select({ id: pollVotes.id, choice: pollVotes.choice })
      .from(pollVotes)
      .where(and(eq(pollVotes.pollId, pollId), eq(pollVotes.accountId, viewerId))),
  ]);
  const fresh = (res[res.length - 2] as PollRow[])[0] ?? poll;
  const own = res[res.length - 1] as { id: string; choice: number }[];
  if (!own.some((v) => padId(v.id) === firstVote)) throw validationFailed("You have already voted on this poll");
  return renderPoll(
    fresh,
    own.map((v) => v.choice),
    false,
  );
}
