// Local status → ActivityPub Note (Question for polls), addressed by visibility as Mastodon does:
// public: to Public, cc followers; unlisted: to followers, cc Public; private: to followers; direct: to mentions.
// Mentioned accounts are always addressed (cc, or to for direct).
import type { Config } from "../../env";
import { acctOf } from "../../entities/accounts/account";
import { liveQuotedPage, type StatusBundle } from "../../entities/statuses/status";
import { withLocalQuoteFallback } from "../../lib/text/quote-inline";
import { mediaUrl, tagUrl } from "../../entities/urls";
import { NOTE_CONTEXT } from "./context";
import { emojiTags } from "./emoji-tags";
import { PUBLIC } from "../remote/normalize";
import { field } from "../remote/normalize";
import { canQuotePolicy } from "../../entities/statuses/quote";
import { approvalUriFor } from "../../services/statuses/quotes";

export function audience(visibility: string, followersUrl: string, mentionUris: string[]): { to: string[]; cc: string[] } {
  switch (visibility) {
    case "public":
      return { to: [PUBLIC], cc: [followersUrl, ...mentionUris] };
    case "unlisted":
      return { to: [followersUrl], cc: [PUBLIC, ...mentionUris] };
    case "private":
      return { to: [followersUrl], cc: mentionUris };
    default:
      return { to: mentionUris, cc: [] };
  }
}

export function renderNote(cfg: Config, b: StatusBundle, id: string, now = Date.now()): Record<string, unknown> | null {
  const s = b.statuses.get(id);
  if (!s || s.reblogOfId) return null;
  const author = b.accounts.get(s.accountId);
  if (!author?.followersUrl) return null;
  const mentioned = b.mentions.get(s.id) ?? [];
  const { to, cc } = audience(
    s.visibility,
    author.followersUrl,
    mentioned.map((m) => m.uri),
  );
  const parent = s.inReplyToId ? b.statuses.get(s.inReplyToId) : undefined;
  const media = b.media.get(s.id) ?? [];
  const poll = b.polls.get(s.id);
  // A quote post carries its `quote-inline` "RE:" link for servers and clients without quote support (Mastodon's).
  const content = withLocalQuoteFallback(s.content, liveQuotedPage(cfg, b, s));
  const note: Record<string, unknown> = {
    id: s.uri,
    type: poll ? "Question" : "Note",
    summary: s.spoilerText || null,
    inReplyTo: parent?.uri ?? null,
    published: new Date(s.createdAt).toISOString(),
    url: s.url,
    attributedTo: author.uri,
    to,
    cc,
    sensitive: s.sensitive || (author.sensitizedAt != null && media.length > 0),
    atomUri: s.uri,
    inReplyToAtomUri: parent?.uri ?? null,
    content,
    contentMap: s.language ? { [s.language]: content } : undefined,
    attachment: media.map((m) => ({
      type: "Document",
      mediaType: m.contentType,
      url: m.fileKey ? mediaUrl(cfg, m.fileKey) : m.remoteUrl,
      name: m.description ?? null,
      blurhash: m.blurhash ?? undefined,
      focalPoint: m.focusX != null && m.focusY != null ? [m.focusX / 1000, m.focusY / 1000] : undefined,
      width: field(field(m.meta, "original"), "width"),
      height: field(field(m.meta, "original"), "height"),
    })),
    tag: [
      ...mentioned.map((m) => ({ type: "Mention", href: m.uri, name: `@${acctOf(m)}${m.domain ? "" : `@${cfg.domain}`}` })),
      ...(b.tags.get(s.id) ?? []).map((t) => ({ type: "Hashtag", href: tagUrl(cfg, t), name: `#${t}` })),
      ...emojiTags(cfg, b.emojis.get(s.id)),
    ],
  };
  if (s.editedAt) note.updated = new Date(s.editedAt).toISOString();
  Object.assign(note, quoteFields(b, s.id));
  // Who may quote it, with automatic approval (the only kind Mastodon sends for its own posts).
  note.interactionPolicy = canQuotePolicy(s.quoteApprovalPolicy, author.uri, author.followersUrl, null, PUBLIC);
  if (poll) {
    // A poll that hides its totals shows no counts until it ends: Mastodon's Poll#loaded_options gives each option
    // nil votes (so `totalItems: null`) unless `expired? || !hide_totals?`. Mastodon still sends votersCount; here it
    // is withheld too, since for a single-choice poll it is the total of the hidden counts.
    const expired = poll.expiresAt != null && poll.expiresAt <= now;
    const showTotals = !poll.hideTotals || expired;
    const choices = poll.options.map((name, i) => ({
      type: "Note",
      name,
      replies: { type: "Collection", totalItems: showTotals ? (poll.votesPerOption[i] ?? 0) : null },
    }));
    note[poll.multiple ? "anyOf" : "oneOf"] = choices;
    note.endTime = poll.expiresAt ? new Date(poll.expiresAt).toISOString() : undefined;
    if (expired) note.closed = new Date(poll.expiresAt!).toISOString();
    if (showTotals) note.votersCount = poll.votersCount;
  }
  return note;
}

/**
 * The quote of a Note (ActivityPub::NoteSerializer): `quote` (FEP-044f; a Tombstone once the quoted status is gone),
 * `_misskey_quote` and `quoteUri` for older readers, and `quoteAuthorization`: the stamp the quoted author granted
 * (ours, made from the row, for a local quoted author; theirs otherwise).
 */
function quoteFields(b: StatusBundle, statusId: string): Record<string, unknown> {
  const q = b.quotes.get(statusId);
  if (!q) return {};
  const quoted = q.quotedStatusId ? b.statuses.get(q.quotedStatusId) : undefined;
  const out: Record<string, unknown> = { quote: quoted ? quoted.uri : { type: "Tombstone" } };
  if (quoted) {
    out._misskey_quote = quoted.uri;
    out.quoteUri = quoted.uri;
  }
  const quotedAuthor = q.quotedAccountId ? b.accounts.get(q.quotedAccountId) : undefined;
  const approval = quotedAuthor && !quotedAuthor.domain ? (q.state === "accepted" ? approvalUriFor(quotedAuthor.uri, q.id) : null) : q.approvalUri;
  if (approval) out.quoteAuthorization = approval;
  return out;
}

export function withContext(obj: Record<string, unknown>): Record<string, unknown> {
  return { "@context": NOTE_CONTEXT, ...obj };
}
