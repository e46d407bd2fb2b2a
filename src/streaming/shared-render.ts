// What the public and hashtag streams carry of a status: the shared keys it belongs on (REST's public and tag
// timelines' rules), its rendering for a signed-out viewer, and the facts each hub filters it by for its viewer
// (viewer-state.ts). Used by the publisher (publish.ts) and by a hub rendering what it missed while its subscription
// travelled to the router (hub.ts).
import type { DB } from "../db/client";
import type { RenderAccountRow } from "../db/schema";
import { loadStatusBundle, renderStatusFrom, type MastodonStatus, type StatusBundle, type StatusRow } from "../entities/statuses/status";
import type { Config } from "../env";
import { searchableText } from "../policy/filter-match";
import type { StatusMeta } from "./protocol";

/** The shared stream keys a status belongs on (empty for everything REST's public and tag timelines leave out). */
export function sharedKeysOf(b: StatusBundle, s: StatusRow, author: RenderAccountRow): string[] {
  if (s.visibility !== "public" || s.reblogOfId || author.suspendedAt || author.silencedAt) return [];
  const keys: string[] = [];
  const where = s.local ? "local" : "remote";
  const media = (b.media.get(s.id) ?? []).length > 0;
  const replyToOther = s.inReplyToId != null && s.inReplyToAccountId !== s.accountId;
  if (!replyToOther) {
    keys.push("public", `public:${where}`);
    if (media) keys.push("public:media", `public:${where}:media`);
  }
  for (const tag of new Set(b.tags.get(s.id) ?? [])) {
    keys.push(`hashtag:${tag}`);
    if (s.local) keys.push(`hashtag:local:${tag}`);
  }
  return keys;
}

function metaOf(b: StatusBundle, s: StatusRow, author: RenderAccountRow, rendered: MastodonStatus): StatusMeta {
  const quoted = rendered.quote && "quoted_status" in rendered.quote ? rendered.quote.quoted_status : null;
  const quotedAuthor = quoted ? b.accounts.get(quoted.account.id) : undefined;
  return {
    statusId: s.id,
    authorId: s.accountId,
    authorDomain: author.domain,
    // Those the status shows (Mastodon's streaming server reads its payload's): not a quote's silent mention.
    mentionIds: (b.mentions.get(s.id) ?? []).map((a) => a.id),
    ...(quotedAuthor ? { quote: { authorId: quotedAuthor.id, authorDomain: quotedAuthor.domain } } : {}),
    language: s.language,
    filterText: searchableText(
      s,
      (b.media.get(s.id) ?? []).map((m) => m.description),
      b.polls.get(s.id)?.options ?? null,
    ),
  };
}

export type SharedPart = { keys: string[]; payload: string; meta: StatusMeta };

/**
 * The signed-out renderings and filtering facts of statuses for the shared keys that have listeners (or that a hub
 * began listening to), by status id (absent: it belongs on none of them). One D1 batch for all of them.
 */
export async function sharedParts(db: DB, items: { statusId: string; cfg: Config }[], listened: readonly string[]): Promise<Map<string, SharedPart>> {
  if (!listened.length || !items.length) return new Map();
  const b = await loadStatusBundle(
    db,
    items.map((i) => i.statusId),
    null,
  );
  return sharedPartsFrom(b, items, listened);
}

/** sharedParts from a bundle already loaded without a viewer (status-parts.ts loads one for both kinds of streams). */
export function sharedPartsFrom(b: StatusBundle, items: { statusId: string; cfg: Config }[], listened: readonly string[]): Map<string, SharedPart> {
  const out = new Map<string, SharedPart>();
  if (!listened.length) return out;
  const wanted = new Set(listened);
  for (const { statusId, cfg } of items) {
    const s = b.statuses.get(statusId);
    const author = s && b.accounts.get(s.accountId);
    if (!s || !author) continue;
    const keys = sharedKeysOf(b, s, author).filter((k) => wanted.has(k));
    const rendered = keys.length ? renderStatusFrom(cfg, b, statusId) : null;
    if (rendered) out.set(statusId, { keys, payload: JSON.stringify(rendered), meta: metaOf(b, s, author, rendered) });
  }
  return out;
}
