// Poll entity (docs.joinmastodon.org/entities/Poll): totals hidden until it ends unless its author asked otherwise.
import type { polls } from "../../db/schema/index";
import type { MastodonCustomEmoji } from "../instance/custom-emoji";

type PollRow = typeof polls.$inferSelect;

export interface MastodonPollOption {
  title: string;
  /** null while the totals are hidden (hide_totals, before the poll ends). */
  votes_count: number | null;
}

export interface MastodonPoll {
  id: string;
  expires_at: string | null;
  expired: boolean;
  multiple: boolean;
  votes_count: number;
  voters_count: number | null;
  options: MastodonPollOption[];
  emojis: MastodonCustomEmoji[];
  /** Only with a viewer. */
  voted?: boolean;
  own_votes?: number[];
}

/** `ownVotes` null when there is no viewer (voted/own_votes are then omitted). */
export function renderPoll(p: PollRow, ownVotes: number[] | null, isOwner: boolean): MastodonPoll {
  const expired = p.expiresAt != null && p.expiresAt <= Date.now();
  const showTotals = !p.hideTotals || expired || isOwner;
  const out: MastodonPoll = {
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
