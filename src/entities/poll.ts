import type { polls } from "../db/schema";

type PollRow = typeof polls.$inferSelect;

/** `ownVotes` null when there is no viewer (voted/own_votes are then omitted). */
export function renderPoll(p: PollRow, ownVotes: number[] | null, isOwner: boolean) {
  const expired = p.expiresAt != null && p.expiresAt <= Date.now();
  const showTotals = !p.hideTotals || expired || isOwner;
  const out: Record<string, unknown> = {
    id: p.id,
    expires_at: p.expiresAt != null ? new Date(p.expiresAt).toISOString() : null,
    expired,
    multiple: p.multiple,
    votes_count: p.votesCount,
    voters_count: p.multiple ? p.votersCount : null,
    options: p.options.map((title, i) => ({ title, votes_count: showTotals ? (p.votesPerOption[i] ?? 0) : null })),
    emojis: [],
  };
  if (ownVotes) {
    out.voted = isOwner || ownVotes.length > 0;
    out.own_votes = ownVotes;
  }
  return out;
}
