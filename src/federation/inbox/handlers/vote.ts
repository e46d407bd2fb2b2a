// An incoming poll vote (src/federation/remote/poll-votes.ts has the vote's shape and the builders): a Create of a Note
// naming an option of a local poll counts on it and never becomes a status.
import { eq } from "drizzle-orm";
import { polls, statuses } from "../../../db/schema/index";
import { receiveVote } from "../../../services/statuses/polls";
import type { VoteNote } from "../../remote/poll-votes";
import { isLocalUri } from "../../remote/resolution";
import { drop, type InboxContext } from "./context";

/**
 * Create{Note} that may be a vote (handlers/note.ts asks before anything else, as Mastodon's poll_vote? does).
 * Returns false when the Note answers no known poll, or names no option of it and has content of its own: it is then
 * an ordinary reply. Everything else is a vote: counted, or refused and dropped, never stored as a status.
 */
export async function handleVoteCreate(ctx: InboxContext, vote: VoteNote): Promise<boolean> {
  const { db, signer } = ctx;
  const [row] = await db
    .select({ statusId: statuses.id, local: statuses.local, poll: polls })
    .from(statuses)
    .innerJoin(polls, eq(polls.id, statuses.pollId))
    .where(eq(statuses.uri, vote.inReplyTo))
    .limit(1);
  if (!row) return false;
  const choice = row.poll.options.indexOf(vote.name);
  if (choice < 0 && vote.hasContent) return false;
  if (choice < 0) return drop("vote for an option the poll does not have");
  if (!row.local || !isLocalUri(ctx.cfg, vote.inReplyTo)) return drop("vote on another server's poll");
  if (vote.attributedTo !== signer.uri) return drop("vote attributed to someone else"); // C12
  const counted = await receiveVote(db, ctx.fx, { poll: row.poll, statusId: row.statusId, voterId: signer.id, choice, uri: vote.id });
  if (!counted) return drop("vote refused (poll closed, already voted, or status not visible to the voter)");
  return true;
}
