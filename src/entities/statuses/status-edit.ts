// StatusEdit entity (docs.joinmastodon.org/entities/StatusEdit): one version of a status, as GET
// /api/v1/statuses/:id/history lists them (oldest first): a stored revision (status_edits), or, for a status never
// edited, its one version taken from its rendering. The author is the status's account as rendered now; no custom
// emojis are listed.
import type { statusEdits } from "../../db/schema/index";
import type { Config } from "../../env";
import type { MastodonAccount } from "../accounts/account";
import type { MastodonCustomEmoji } from "../instance/custom-emoji";
import { renderMedia, type MastodonMediaAttachment } from "./media";
import type { MastodonStatus, MediaRow } from "./status";
import { isoTime } from "../urls";

export type StatusEditRow = typeof statusEdits.$inferSelect;

export interface MastodonStatusEdit {
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  created_at: string;
  account: MastodonAccount;
  emojis: MastodonCustomEmoji[];
  media_attachments: MastodonMediaAttachment[];
  /** The poll's options as they were; only when the version had a poll. */
  poll?: { options: { title: string }[] };
}

/** The one version of a status never edited, from its rendering. */
export function renderUneditedVersion(s: MastodonStatus): MastodonStatusEdit {
  const out: MastodonStatusEdit = {
    content: s.content,
    spoiler_text: s.spoiler_text,
    sensitive: s.sensitive,
    created_at: s.created_at,
    account: s.account,
    emojis: [],
    media_attachments: s.media_attachments,
  };
  if (s.poll) out.poll = { options: s.poll.options.map((o) => ({ title: o.title })) };
  return out;
}

/**
 * A stored revision. `media`: the attachments the revisions name, by id; `rejectMedia`: the author's domain is blocked
 * with reject_media (entities/statuses/media.ts).
 */
export function renderStatusEdit(
  cfg: Config,
  e: StatusEditRow,
  account: MastodonAccount,
  media: ReadonlyMap<string, MediaRow>,
  rejectMedia: boolean,
): MastodonStatusEdit {
  const out: MastodonStatusEdit = {
    content: e.content,
    spoiler_text: e.spoilerText,
    sensitive: e.sensitive,
    created_at: isoTime(e.createdAt),
    account,
    emojis: [],
    media_attachments: (e.mediaIds ?? [])
      .map((id) => media.get(id))
      .filter((m): m is MediaRow => !!m)
      .map((m) => renderMedia(cfg, m, rejectMedia)),
  };
  if (e.pollOptions?.length) out.poll = { options: e.pollOptions.map((title) => ({ title })) };
  return out;
}
