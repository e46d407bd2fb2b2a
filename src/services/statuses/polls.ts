// Polls: validation of a new poll (security A5), reading one, and voting (one batch, race-safe counters).
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { polls, pollVotes, statuses } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { renderPoll } from "../../entities/statuses/poll";
import { notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { cleanText } from "../../lib/text/text";
import { statusReadableBy } from "../../policy/visibility";

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
    updateQueuedAt: null,
  };
}

/** The poll and the viewer's votes, when the poll's status is visible to the viewer (one round trip). */
async function loadPoll(db: DB, pollId: string, viewerId: string | null) {
  const [rows, votes] = await db.batch([
    db
      // Aliased: D1 batch rows are keyed by column name, and polls has its own account_id.
      .select({
        poll: polls,
        authorId: sql`${statuses.accountId}`.mapWith(statuses.accountId).as("author_id"),
        local: sql`${statuses.local}`.mapWith(statuses.local).as("status_local"),
      })
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
  return { poll: r.poll, authorId: r.authorId, local: r.local, ownVotes: votes.map((v) => v.choice) };
}

export async function showPoll(db: DB, pollId: string, viewerId: string | null) {
  const { poll, authorId, ownVotes } = await loadPoll(db, pollId, viewerId);
  return renderPoll(poll, viewerId ? ownVotes : null, viewerId === authorId);
}

/** A queued Update{Question} whose job never ran (lost, or still retrying) stops blocking new ones after this long. */
const UPDATE_QUEUE_STALE_MS = 3_600_000;

interface CastVotes {
  pollId: string;
  statusId: string;
  voterId: string;
  /** Distinct option indexes, each checked against the poll's options. */
  choices: number[];
  /** The vote Note's id, for a vote that came from another server. */
  uri?: string | null;
  /** A voter who voted before may add other choices (a remote voter's multiple-choice votes arrive one by one). */
  addToOwnVotes: boolean;
  /** Check that the voter may read the poll's status (REST checked it already when it loaded the poll). */
  checkReadable: boolean;
  /** The poll is local: queue one Update{Question} with the new counts for the voters' servers. */
  queueUpdate: boolean;
  now: number;
}

/**
 * Records votes in ONE batch, race-safe: the INSERT ... SELECT refuses them in SQL when the poll has ended, the voter
 * already voted (or, with `addToOwnVotes`, already chose that option) or may not read the status; the counters move
 * only when this call's rows are the ones that landed. Returns the updated poll, or null when nothing was recorded.
 * With `queueUpdate`, the same UPDATE claims the poll's pending Update{Question} (Mastodon's
 * DistributePollUpdateWorker: unique until executed, never for hidden totals); `updateQueued` says whether this call
 * claimed it, so that only then an update_poll action is recorded.
 */
async function castVotes(db: DB, v: CastVotes): Promise<{ poll: PollRow; updateQueued: boolean } | null> {
  const { now, choices } = v;
  const rows = choices.map((choice) => [padId(snowflake(now)), choice]);
  const pv = padId(v.voterId);
  const pp = padId(v.pollId);
  const firstVote = rows[0]?.[0];
  const earlier = v.addToOwnVotes
    ? sql`SELECT 1 FROM poll_votes o WHERE o.poll_id = ${pp} AND o.account_id = ${pv} AND o.choice = json_extract(j.value, '$[1]')`
    : sql`SELECT 1 FROM poll_votes o WHERE o.poll_id = ${pp} AND o.account_id = ${pv}`;
  const readable = v.checkReadable
    ? sql` AND EXISTS (SELECT 1 FROM ${statuses} WHERE ${statuses.id} = ${padId(v.statusId)} AND ${statusReadableBy(v.voterId)})`
    : sql``;
  const mine = sql`EXISTS (SELECT 1 FROM poll_votes WHERE id = ${firstVote})`;
  let perOption = sql`votes_per_option`;
  for (const ch of choices) perOption = sql`json_set(${perOption}, ${`$[${ch}]`}, coalesce(json_extract(votes_per_option, ${`$[${ch}]`}), 0) + 1)`;
  const [, updated] = await db.batch([
    db.run(sql`INSERT INTO poll_votes (id, poll_id, account_id, choice, uri, created_at)
      SELECT json_extract(j.value, '$[0]'), ${pp}, ${pv}, json_extract(j.value, '$[1]'), ${v.uri ?? null}, ${now} FROM json_each(${JSON.stringify(rows)}) j
      WHERE EXISTS (SELECT 1 FROM polls WHERE id = ${pp} AND (expires_at IS NULL OR expires_at > ${now}))
        AND NOT EXISTS (${earlier})${readable}`),
    db
      .update(polls)
      .set({
        votesPerOption: perOption,
        votesCount: sql`votes_count + ${choices.length}`,
        // A voter counts once: when this call's rows are all the votes they have in this poll.
        votersCount: sql`voters_count + ((SELECT count(*) FROM poll_votes WHERE poll_id = ${pp} AND account_id = ${pv}) = ${choices.length})`,
        updatedAt: now,
        ...(v.queueUpdate
          ? {
              updateQueuedAt: sql`CASE WHEN hide_totals = 0 AND (update_queued_at IS NULL OR update_queued_at < ${now - UPDATE_QUEUE_STALE_MS})
                THEN ${now} ELSE update_queued_at END`,
            }
          : {}),
      })
      .where(and(eq(polls.id, v.pollId), mine))
      .returning(),
  ]);
  const poll = (updated as PollRow[])[0];
  if (!poll) return null;
  return { poll, updateQueued: v.queueUpdate && poll.updateQueuedAt === now };
}

/** POST /api/v1/polls/:id/votes: Mastodon's VoteService for a local voter. */
export async function votePoll(db: DB, fx: Effects, pollId: string, viewerId: string, rawChoices: number[]) {
  const { poll, authorId, local, ownVotes } = await loadPoll(db, pollId, viewerId);
  const now = Date.now();
  if (poll.expiresAt != null && poll.expiresAt <= now) throw validationFailed("The poll has already ended");
  if (authorId === viewerId) throw validationFailed("You cannot vote in your own poll");
  if (ownVotes.length > 0) throw validationFailed("You have already voted on this poll");
  const choices = [...new Set(rawChoices)];
  if (choices.length === 0) throw validationFailed("Choices can't be blank");
  if (!poll.multiple && choices.length > 1) throw validationFailed("You can only choose one option in this poll");
  if (choices.some((ch) => !Number.isInteger(ch) || ch < 0 || ch >= poll.options.length)) throw validationFailed("Choice is not a valid option");
  if (!poll.statusId) throw notFound();

  const cast = await castVotes(db, {
    pollId,
    statusId: poll.statusId,
    voterId: viewerId,
    choices,
    addToOwnVotes: false,
    checkReadable: false,
    queueUpdate: local,
    now,
  });
  if (!cast) {
    if (poll.expiresAt != null && poll.expiresAt <= Date.now()) throw validationFailed("The poll has already ended");
    throw validationFailed("You have already voted on this poll");
  }
  // A remote poll counts on its own server: one Create{Note} per choice goes to its author. A local one tells the
  // voters' servers its new counts a little later, in one Update for however many votes arrive meanwhile. Recorded
  // after the batch: whether the votes counted and the Update was queued is what it returned; they travel by the send
  // only (src/effects/commit.ts; a lost Update is queued again by the poll's next vote once it is stale).
  if (!local) fx.federate({ kind: "vote", accountId: viewerId, pollId });
  else if (cast.updateQueued) fx.federate({ kind: "update_poll", statusId: poll.statusId });
  return renderPoll(cast.poll, choices, false);
}

/**
 * A vote from another server on a local poll (Mastodon's ActivityPub::Activity::Create#poll_vote!): one choice per
 * activity, the voter may add further choices of a multiple-choice poll, never the same one twice nor a second one
 * of a single-choice poll. No status, no notification. Returns whether the vote counted.
 */
export async function receiveVote(db: DB, fx: Effects, v: { poll: PollRow; statusId: string; voterId: string; choice: number; uri: string }): Promise<boolean> {
  const now = Date.now();
  const { poll } = v;
  if (poll.expiresAt != null && poll.expiresAt <= now) return false;
  if (poll.accountId === v.voterId || v.choice < 0 || v.choice >= poll.options.length) return false;
  const cast = await castVotes(db, {
    pollId: poll.id,
    statusId: v.statusId,
    voterId: v.voterId,
    choices: [v.choice],
    uri: v.uri,
    addToOwnVotes: poll.multiple,
    checkReadable: true,
    queueUpdate: true,
    now,
  });
  if (!cast) return false;
  if (cast.updateQueued) fx.federate({ kind: "update_poll", statusId: v.statusId });
  return true;
}
