// One outbox item of an imported archive → the rows of a local status of the importing account (or of its boost), as
// statements for the round's batch. Nothing here notifies, fetches, fans out or federates: an imported status gets no
// mention rows (mentions stay links in its content, so nobody is notified and a direct message stays the author's
// alone), no home-feed row, and no effect at all. Its id is made from its original `published` time, so profiles and
// timelines sort it at its date; its URI is a new local one, and the original URI keys `archive_import_items`, so a
// second import of the same archive skips it.
import { sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { insertMedia, insertPoll, insertStatus } from "../../db/inserts";
import type { AccountRow, Visibility } from "../../db/schema";
import type { MediaRow, PollRow, StatusRow } from "../../entities/statuses/status";
import { newStatusFields } from "../../entities/statuses/status";
import { statusUri, statusUrl } from "../../entities/urls";
import type { Config } from "../../env";
import { type NormalizedNote, normalizeActivity, normalizeNote, visibilityFromAudience } from "../../federation/remote/normalize";
import { plainText, sanitizeHtml } from "../../federation/remote/sanitize";
import { padId, snowflake } from "../../lib/text/ids";
import { normalizeLanguage, normalizeTag } from "../../lib/text/text";
import { reblogRowStatement } from "../interactions/reblogs";
import { searchIndexStatement } from "../statuses/search-index";
import { linkStatusTagsStatement, MAX_TAG_LENGTH, MAX_TAGS_PER_STATUS, type TagName } from "../tags/tags";

/** Attachment paths inside an archive are relative; the normaliser takes http(s) URLs only, so they travel under this. */
export const ARCHIVE_BASE = "https://archive.invalid/";
export const MAX_IMPORTED_ATTACHMENTS = 4;

/** What the round knows about statuses already in place (earlier rounds, this round, or on this server). */
export interface KnownStatus {
  id: string;
  accountId: string;
  conversationId: string | null;
  visibility: Visibility;
}

export type ParsedItem =
  | { kind: "create"; uri: string; note: NormalizedNote; published: number }
  | { kind: "announce"; uri: string; object: string; published: number; visibility: Visibility }
  | { kind: "skip"; reason: string };

/** A stored attachment ready for its row (the file already in R2). */
export interface StoredAttachment {
  id: string;
  key: string;
  contentType: string;
  size: number;
  type: string;
  meta: Record<string, unknown>;
  description: string | null;
  focus: [number, number] | null;
  blurhash: string | null;
}

function relativeMedia(o: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(o.attachment)) return o;
  return {
    ...o,
    attachment: o.attachment.map((a) => {
      const url = a && typeof a === "object" ? (a as Record<string, unknown>).url : undefined;
      return typeof url === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(url) ? { ...(a as object), url: ARCHIVE_BASE + url.replace(/^\/+/, "") } : a;
    }),
  };
}

/** An outbox item as the archive holds it: a Create of a Note/Question, or an Announce, by the archive's actor. */
export function parseItem(raw: unknown, actorUri: string, followersUrl: string): ParsedItem {
  const act = normalizeActivity(raw);
  if (!act) return { kind: "skip", reason: "not an activity" };
  if (act.actor !== actorUri) return { kind: "skip", reason: "another actor's activity" };
  if (act.type === "Announce") {
    if (!act.id || !act.objectId) return { kind: "skip", reason: "announce without id or object" };
    const visibility = visibilityFromAudience(act.to, act.cc, followersUrl);
    // Mastodon refuses to boost private and direct statuses; an Announce addressed that way is not a public boost.
    if (visibility === "direct") return { kind: "skip", reason: "direct announce" };
    return { kind: "announce", uri: act.id, object: act.objectId, published: act.published ?? Date.now(), visibility };
  }
  if (act.type !== "Create" || !act.object) return { kind: "skip", reason: `${act.type} is not imported` };
  const note = normalizeNote(relativeMedia(act.object));
  if (!note) return { kind: "skip", reason: "object is not a status" };
  if (note.attributedTo !== actorUri) return { kind: "skip", reason: "another author's status" };
  return { kind: "create", uri: note.id, note, published: note.published ?? act.published ?? Date.now() };
}

/** The archive path of an attachment URL made by parseItem (null for a URL that was absolute in the archive). */
export function archivePath(url: string): string | null {
  return url.startsWith(ARCHIVE_BASE) ? decodeURIComponent(url.slice(ARCHIVE_BASE.length)) : null;
}

function tagNames(note: NormalizedNote): TagName[] {
  const seen = new Map<string, TagName>();
  for (const h of note.hashtags) {
    const name = normalizeTag(h);
    if (!name || name.length > MAX_TAG_LENGTH || seen.has(name)) continue;
    seen.set(name, { name, display: h.normalize("NFKC").slice(0, MAX_TAG_LENGTH) });
    if (seen.size >= MAX_TAGS_PER_STATUS) break;
  }
  return [...seen.values()];
}

export interface ImportedStatus {
  row: StatusRow;
  stmts: Statement[];
}

/**
 * The statements of one imported status: the status (in its parent's conversation, else a new conversation id), its
 * media rows, its poll (closed, with the archive's results), its hashtags (made if new, without touching their
 * last use, so trends do not see old posts as new), its search row, and its `archive_import_items` key.
 */
export function importedStatusStatements(
  db: DB,
  cfg: Config,
  me: AccountRow,
  item: Extract<ParsedItem, { kind: "create" }>,
  followersUrl: string,
  parent: KnownStatus | null,
  media: StoredAttachment[],
  closeBefore: number,
): ImportedStatus {
  const { note, published } = item;
  const id = snowflake(published);
  const stmts: Statement[] = [];
  // A thread's id, with no `conversations` row: that table only finds remote threads by their URI, and muting a
  // conversation needs the id alone. Three D1 rows written fewer per status (the row, its key and its uri index).
  const conversationId = parent?.conversationId ?? snowflake(published);
  const mediaRows: MediaRow[] = media.map((m) => ({
    id: m.id,
    accountId: me.id,
    statusId: id,
    scheduledStatusId: null,
    type: m.type,
    fileKey: m.key,
    contentType: m.contentType,
    fileSize: m.size,
    remoteUrl: null,
    previewKey: null,
    previewRemoteUrl: null,
    description: m.description,
    focusX: m.focus ? Math.round(m.focus[0] * 1000) : null,
    focusY: m.focus ? Math.round(m.focus[1] * 1000) : null,
    meta: m.meta,
    blurhash: m.blurhash,
    processing: 0,
    createdAt: published,
    detachedAt: null,
  }));
  let poll: PollRow | null = null;
  if (note.poll?.options.length) {
    const votes = note.poll.options.map((o) => Math.max(0, Math.floor(o.votes)));
    const sum = votes.reduce((a, b) => a + b, 0);
    poll = {
      id: snowflake(published),
      statusId: id,
      accountId: me.id,
      options: note.poll.options.map((o) => o.title),
      votesPerOption: votes,
      multiple: note.poll.multiple,
      hideTotals: false,
      votesCount: sum,
      votersCount: note.poll.votersCount ?? sum,
      // Closed, and before the cron's "poll ended" window, so nobody is told it just ended.
      expiresAt: Math.min(note.poll.endTime ?? published, closeBefore),
      createdAt: published,
      updatedAt: published,
      updateQueuedAt: null,
    };
  }
  const content = sanitizeHtml(note.content);
  const text = plainText(content);
  const visibility: Visibility = visibilityFromAudience(note.to, note.cc, followersUrl);
  const row: StatusRow = {
    id,
    uri: statusUri(cfg, me.username, id),
    url: statusUrl(cfg, me.username, id),
    accountId: me.id,
    local: true,
    inReplyToId: parent?.id ?? null,
    inReplyToAccountId: parent?.accountId ?? null,
    reblogOfId: null,
    conversationId,
    text,
    content,
    spoilerText: note.summary,
    sensitive: note.sensitive,
    visibility,
    language: normalizeLanguage(note.language),
    applicationId: null,
    pollId: poll?.id ?? null,
    mediaIds: mediaRows.length ? mediaRows.map((m) => m.id) : null,
    emojiShortcodes: null,
    ...newStatusFields(published),
  };
  stmts.push(insertStatus(db, row));
  for (const m of mediaRows) stmts.push(insertMedia(db, m));
  if (poll) stmts.push(insertPoll(db, poll));
  const tags = tagNames(note);
  if (tags.length) {
    const rows = JSON.stringify(tags.map((t) => [padId(snowflake(published)), t.name, t.display]));
    stmts.push(
      db.run(sql`INSERT OR IGNORE INTO tags (id, name, display_name, usable, trendable, created_at)
        SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), 1, 1, ${published}
        FROM json_each(${rows}) j`),
      linkStatusTagsStatement(
        db,
        id,
        tags.map((t) => t.name),
      ),
    );
  }
  stmts.push(searchIndexStatement(db, id, { spoilerText: note.summary, text, pollOptions: poll?.options, mediaDescriptions: media.map((m) => m.description) }));
  stmts.push(itemKeyStatement(db, me.id, item.uri, id, parent ? null : note.inReplyTo));
  return { row, stmts };
}

/** A boost of a status found on this server, at the boost's date. */
export function importedBoostStatements(
  db: DB,
  cfg: Config,
  me: AccountRow,
  item: Extract<ParsedItem, { kind: "announce" }>,
  target: KnownStatus,
): Statement[] {
  const id = snowflake(item.published);
  const boost = reblogRowStatement(db, {
    id,
    uri: `${statusUri(cfg, me.username, id)}/activity`,
    accountId: me.id,
    local: true,
    reblogOfId: target.id,
    visibility: item.visibility,
    applicationId: null,
    createdAt: item.published,
    updatedAt: item.published,
  });
  return [boost, itemKeyStatement(db, me.id, item.uri, id, null)];
}

/** The item's key: a second import of it finds it here and skips it. */
export function itemKeyStatement(db: DB, accountId: string, originalUri: string, statusId: string, inReplyToUri: string | null): Statement {
  return db.run(sql`INSERT INTO archive_import_items (account_id, original_uri, status_id, in_reply_to_uri)
    VALUES (${padId(accountId)}, ${originalUri}, ${padId(statusId)}, ${inReplyToUri})`);
}
