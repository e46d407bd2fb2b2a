// Poll votes over ActivityPub, as Mastodon sends and reads them (an incoming vote is counted by
// src/federation/inbox/handlers/vote.ts). A vote is a Create of a Note with no content whose
// `name` is the chosen option and whose `inReplyTo` is the Question, addressed to the poll's author only
// (ActivityPub::VoteSerializer); one per choice. Incoming votes count on local polls and never become statuses;
// outgoing ones leave for remote polls (outbound.ts calls the builders here). After votes on a local poll the
// Question goes out again in an Update with its counts (DistributePollUpdateWorker), and an Update of a remote
// Question moves the counts shown here even when it carries no new edit (ProcessStatusUpdateService's implicit
// update).
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, polls, statuses } from "../../db/schema/index";
import type { PollRow } from "../../entities/statuses/status";
import { padId } from "../../lib/text/ids";
import { AS } from "../outbound/context";
import { iri, type NormalizedNote } from "./normalize";

/** Longest option name looked at (Mastodon's own options are at most 50 characters, others' rarely more). */
const MAX_VOTE_NAME = 500;

export interface VoteNote {
  id: string;
  name: string;
  inReplyTo: string;
  attributedTo: string | null;
  hasContent: boolean;
}

/** The shape of a vote: a Note with a `name` and an `inReplyTo`. Whether it is one depends on what it replies to. */
export function voteNoteOf(o: Record<string, unknown> | null): VoteNote | null {
  if (o?.type !== "Note") return null;
  const id = iri(o.id);
  const name = typeof o.name === "string" ? o.name : null;
  const inReplyTo = iri(o.inReplyTo);
  if (!id || !name || name.length > MAX_VOTE_NAME || !inReplyTo) return null;
  const map = o.contentMap && typeof o.contentMap === "object" ? Object.values(o.contentMap as object) : [];
  const raw = typeof o.content === "string" ? o.content : typeof map[0] === "string" ? map[0] : "";
  const hasContent =
    raw
      .slice(0, 10_000)
      .replace(/<[^>]*>/g, "")
      .trim() !== "";
  return { id, name, inReplyTo, attributedTo: iri(o.attributedTo), hasContent };
}

/**
 * Update{Question} that is not a new edit (no `updated`, or not newer than the last edit): only the counts move, and
 * only when the options are the ones we have (Mastodon: update_poll!(allow_significant_changes: false)).
 */
export async function applyPollCounts(db: DB, statusId: string, note: NormalizedNote): Promise<boolean> {
  const p = note.poll;
  if (!p) return false;
  const votes = p.options.map((o) => Math.max(0, Math.floor(o.votes)));
  const total = votes.reduce((a, b) => a + b, 0);
  const voters = p.votersCount != null ? Math.max(0, Math.floor(p.votersCount)) : p.multiple ? null : total;
  const res = await db
    .update(polls)
    .set({
      votesPerOption: votes,
      votesCount: total,
      ...(voters != null ? { votersCount: voters } : {}),
      ...(p.endTime != null ? { expiresAt: p.endTime } : {}),
      updatedAt: Date.now(),
    })
    .where(and(eq(polls.statusId, statusId), sql`${polls.options} = ${JSON.stringify(p.options.map((o) => o.title))}`))
    .returning({ id: polls.id });
  return res.length > 0;
}

// ---- outgoing ----

/** Mastodon's vote ids: `${voter}#votes/${vote id}`, and the Create's id with `/activity` appended. */
export function voteActivity(voterUri: string, voteId: string, name: string, questionUri: string, authorUri: string): Record<string, unknown> {
  const id = `${voterUri}#votes/${voteId}`;
  return {
    "@context": AS,
    id: `${id}/activity`,
    type: "Create",
    actor: voterUri,
    to: authorUri,
    object: { id, type: "Note", name, attributedTo: voterUri, inReplyTo: questionUri, to: authorUri },
  };
}

/** Inboxes of remote accounts that voted in a poll or boosted its status (DistributePollUpdateWorker's list). */
export async function pollAudienceInboxes(db: DB, poll: Pick<PollRow, "id" | "statusId">): Promise<string[]> {
  const rows = await db
    .selectDistinct({ inbox: sql<string>`coalesce(${accounts.sharedInboxUrl}, ${accounts.inboxUrl})` })
    .from(accounts)
    .where(
      and(
        sql`${accounts.domain} IS NOT NULL AND ${accounts.suspendedAt} IS NULL`,
        sql`${accounts.id} IN (SELECT account_id FROM poll_votes WHERE poll_id = ${padId(poll.id)}
          UNION SELECT account_id FROM ${statuses} WHERE reblog_of_id = ${padId(poll.statusId ?? "0")})`,
      ),
    );
  return rows.map((r) => r.inbox).filter(Boolean);
}
