// Remote statuses: ingesting a normalised Note or Question into statuses with its mentions, tags, media, poll and
// thread, and applying an Update to it. Finding one by URI (and fetching it) is resolve-status.ts.
import { and, eq, sql } from "drizzle-orm";
import { type AheadRead, type DB, type FinishingBatch, runFinishing, type Statement } from "../../db/client";
import { cacheMediaEffect, cacheMediaReadAhead, type CacheMediaEffect } from "../../services/remote-media/attachments";
import { insertConversation, insertMedia, insertPoll, insertStatus, insertStatusEdit } from "../../db/inserts";
import { frozenSelect } from "../../db/frozen";
import { accounts, conversations, mediaAttachments, mentions, polls, statuses, tombstones } from "../../db/schema/index";
import { type MediaRow, newStatusFields, type PollRow, type StatusRow } from "../../entities/statuses/status";
import { incomingQuoteStatement, remoteQuotePolicy } from "./quotes-inbound";
import { storedQuoteFallback, storedQuoteQuery, withQuoteFallback } from "./quote-fallback";
import { firstChunk } from "./first-chunk";
import { localQuotesOfQuery, quotedUpdateNotifications } from "../../services/statuses/quotes";
import { padId, snowflake } from "../../lib/text/ids";
import { normalizeLanguage, normalizeTag } from "../../lib/text/text";
import { httpUrl } from "../../lib/http/urls";
import type { AccountRow } from "../../db/schema/index";
import { isUniqueViolation } from "../../db/unique";
import { notificationWrite, notificationWrites, type NewNotification } from "../../services/notifications/notifications";
import type { Effect, NotifyEffect } from "../../effects/types";
import { carryUpdateAhead, publishUpdateReadAhead } from "../../streaming/read-ahead";
import { cardUrlOfHtml, resetCardStatement } from "../../services/statuses/preview-cards";
import { htmlSearchText, searchIndexStatement } from "../../services/statuses/search-index";
import { statusShortcodes, upsertRemoteEmojisStatement } from "../../services/statuses/custom-emojis";
import { accountCanRead } from "../../policy/visibility";
import { MAX_TAG_LENGTH, MAX_TAGS_PER_STATUS, statusTagsStatements, type TagName } from "../../services/tags/tags";
import { sameHost, visibilityFromAudience, type NormalizedNote } from "./normalize";
import { isTombstoned, MAX_REPLY_DEPTH, type Resolution, statusByUri } from "./resolution";
import { htmlToText, sanitizeHtml } from "./sanitize";
import { accountRows, statusRowByUri, statusRows } from "../../db/table-rows";
import { abortUnlessOneChanged, nextEditedAt, originalVersionStatement, retryEdit, stillAsRead } from "../../services/statuses/status-revision";
import { valueList } from "../../db/id-list";

/** Mastodon fans out and notifies only for statuses younger than this (Status::REAL_TIME_WINDOW). */
export const REALTIME_WINDOW_MS = 6 * 3600_000;
const MAX_MENTIONED = 100;
const MAX_SPOILER = 1500;

function mediaType(mime: string | null): string {
  const m = (mime ?? "").toLowerCase();
  if (m.startsWith("image/")) return "image";
  if (m.startsWith("video/")) return "video";
  if (m.startsWith("audio/")) return "audio";
  return "unknown";
}

function mediaRow(a: NormalizedNote["attachments"][number], accountId: string, statusId: string, now: number): MediaRow {
  const meta =
    a.width && a.height && a.width > 0 && a.height > 0
      ? { original: { width: a.width, height: a.height, size: `${a.width}x${a.height}`, aspect: a.width / a.height } }
      : null;
  return {
    id: snowflake(now),
    accountId,
    statusId,
    scheduledStatusId: null,
    type: mediaType(a.mediaType),
    fileKey: null,
    contentType: a.mediaType,
    fileSize: null,
    remoteUrl: a.url,
    previewKey: null,
    previewRemoteUrl: null,
    description: a.description,
    focusX: a.focus ? Math.round(a.focus[0] * 1000) : null,
    focusY: a.focus ? Math.round(a.focus[1] * 1000) : null,
    meta,
    blurhash: a.blurhash,
    processing: 0,
    createdAt: now,
    detachedAt: null,
  };
}

/**
 * The effect that fetches `media`'s files into R2 once the batch storing them committed (the caller records it then),
 * or null: none to fetch, the operator turned caching off, or the author's media are rejected.
 */
function mediaCacheOf(r: Resolution, author: AccountRow, media: MediaRow[]): CacheMediaEffect | null {
  if (!media.length || !r.cfg.cacheRemoteMedia || author.rejectMedia) return null;
  return cacheMediaEffect(media.map((m) => m.id));
}

/** The cache effect's read, to end its write batch (JoinWrites): none without one. */
const cacheReadsOf = (r: Resolution, cache: CacheMediaEffect | null): AheadRead[] => (cache ? [cacheMediaReadAhead(r.db, r.fx, cache)] : []);

function tagNames(raw: string[]): TagName[] {
  const out = new Map<string, TagName>();
  for (const r of raw) {
    const name = normalizeTag(r);
    if (!name || name.length > MAX_TAG_LENGTH || out.has(name)) continue;
    out.set(name, { name, display: r.normalize("NFKC").slice(0, MAX_TAG_LENGTH) });
    if (out.size >= MAX_TAGS_PER_STATUS) break;
  }
  return [...out.values()];
}

interface Mentioned {
  account: AccountRow;
  silent: boolean;
}

/** The hrefs of a Note's Mention tags: links to them are not the status's card link. */
const mentionUrlsOf = (note: NormalizedNote) => new Set(note.mentions.map((m) => m.href));

/**
 * The accounts a Note mentions: local and known remote accounts named by Mention tags (by uri or url), and local
 * recipients in to/cc as silent mentions. Remote ones matter for the status's `mentions`, its context and who a reply
 * reaches; only local ones are notified.
 */
function noteMentionsQuery(db: DB, note: NormalizedNote) {
  const tagged = [...new Set(note.mentions.map((m) => m.href))].slice(0, MAX_MENTIONED);
  const audience = [...new Set([...note.to, ...note.cc])].slice(0, 2 * MAX_MENTIONED);
  const everyone = [...new Set([...tagged, ...audience])];
  if (!everyone.length) return null;
  const all = valueList(everyone);
  const tags = valueList(tagged);
  // Found by uri or url among them all (two index lookups, accounts_uri and accounts_url); then a remote account only
  // if a Mention tag names it (`tags` is part of `all`).
  return accountRows(db, {
    where: sql`${accounts.suspendedAt} IS NULL
      AND (${accounts.uri} IN ${all} OR ${accounts.url} IN ${all})
      AND (${accounts.domain} IS NULL OR ${accounts.uri} IN ${tags} OR ${accounts.url} IN ${tags})`,
    limit: 2 * MAX_MENTIONED,
  });
}

function noteMentionsFrom(note: NormalizedNote, rows: AccountRow[]): Mentioned[] {
  const tagged = [...new Set(note.mentions.map((m) => m.href))].slice(0, MAX_MENTIONED);
  const taggedSet = new Set(tagged);
  const seen = new Set<string>();
  return rows
    .filter((a) => !seen.has(a.id) && seen.add(a.id))
    .map((a) => ({ account: a, silent: !(taggedSet.has(a.uri) || (a.url != null && taggedSet.has(a.url))) }));
}

async function noteMentions(db: DB, note: NormalizedNote): Promise<Mentioned[]> {
  const q = noteMentionsQuery(db, note);
  return q ? noteMentionsFrom(note, await q) : [];
}

function mentionRowsStatement(db: DB, statusId: string, list: Mentioned[], now: number) {
  const rows = JSON.stringify(list.map((m) => [padId(snowflake(now)), padId(m.account.id), m.silent ? 1 : 0]));
  return db.run(sql`INSERT OR IGNORE INTO mentions (id, status_id, account_id, silent)
    SELECT json_extract(j.value, '$[0]'), ${padId(statusId)}, json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]') FROM json_each(${rows}) j`);
}

function pollFields(note: NormalizedNote) {
  const p = note.poll;
  if (!p || p.options.length < 1) return null;
  const votes = p.options.map((o) => Math.max(0, Math.floor(o.votes)));
  const total = votes.reduce((a, b) => a + b, 0);
  return {
    options: p.options.map((o) => o.title),
    votesPerOption: votes,
    multiple: p.multiple,
    votesCount: total,
    votersCount: p.votersCount != null ? Math.max(0, Math.floor(p.votersCount)) : p.multiple ? 0 : total,
    expiresAt: p.endTime,
  };
}

interface Rendered {
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
}

async function renderNoteText(note: NormalizedNote): Promise<Rendered> {
  const content = await sanitizeHtml(note.content);
  const spoilerText = (await htmlToText(note.summary)).slice(0, MAX_SPOILER);
  return { content, spoilerText, sensitive: note.sensitive || spoilerText !== "", language: normalizeLanguage(note.language) };
}

/** Where the thread lives: the parent's conversation, else one named by the object's context, else a new one. */
async function conversationFor(db: DB, note: NormalizedNote, parent: StatusRow | null, now: number, known?: string | null) {
  if (parent?.conversationId) return { id: parent.conversationId, insert: null };
  if (note.conversation) {
    const c = known !== undefined ? (known ? { id: known } : undefined) : (await conversationByUri(db, note.conversation))[0];
    if (c) return { id: c.id, insert: null };
  }
  const id = snowflake(now);
  return { id, insert: { id, uri: note.conversation, createdAt: now } };
}

// Every incoming Create reads these two: their text built once per isolate (db/frozen.ts).
const conversationByUriRows = frozenSelect((db) =>
  db
    .select({ id: conversations.id })
    .from(conversations)
    .where(eq(conversations.uri, sql.placeholder("uri")))
    .limit(1),
);
const conversationByUri = (db: DB, uri: string) => conversationByUriRows(db, { uri });
const tombstoneRows = frozenSelect((db) =>
  db
    .select({ uri: tombstones.uri })
    .from(tombstones)
    .where(eq(tombstones.uri, sql.placeholder("uri")))
    .limit(1),
);

/** ingestNote's first reads, read by the caller in a batch of its own (Create: issue 12, inbound round trips). */
export interface IngestLookup {
  existing: StatusRow | null;
  tombstoned: boolean;
  /** The conversation by the note's `conversation` uri (null: none; undefined: not read). */
  conversationId?: string | null;
  /** The accounts it mentions (noteMentions): used when nothing is fetched before them (no reply, or a known parent). */
  mentioned?: Mentioned[];
  /** The status it replies to, when stored (null: not stored, or not a reply). */
  parent?: StatusRow | null;
}

export function ingestLookupStatements(db: DB, note: NormalizedNote) {
  const mentionsQ = noteMentionsQuery(db, note);
  return [
    statusRowByUri(db, note.id),
    tombstoneRows(db, { uri: note.id }),
    conversationByUri(db, note.conversation ?? ""),
    statusRowByUri(db, note.inReplyTo && note.inReplyTo !== note.id ? note.inReplyTo : ""),
    ...(mentionsQ ? [mentionsQ] : []),
  ] as const;
}

export function ingestLookupFrom(note: NormalizedNote, res: readonly unknown[]): IngestLookup {
  const [existing, tomb, conv, parent, mentioned] = res as [StatusRow[], unknown[], { id: string }[], StatusRow[], AccountRow[] | undefined];
  return {
    existing: existing[0] ?? null,
    tombstoned: tomb.length > 0,
    conversationId: note.conversation ? (conv[0]?.id ?? null) : undefined,
    mentioned: noteMentionsFrom(note, mentioned ?? []),
    parent: parent[0] ?? null,
  };
}

/**
 * Joins a write batch (src/federation/inbox/handlers/context.ts withFinish): `notify`, its notifications' effects;
 * `ahead`, reads other effects of the batch may have made at its end.
 */
export type JoinWrites = (writes: Statement[], notify: readonly NotifyEffect[], ahead?: readonly AheadRead[]) => FinishingBatch;

export interface IngestOptions {
  pre?: IngestLookup;
  /**
   * Adds statements to the write batch (the inbox item's finishing statements, and reads for the `notify` effects of
   * the batch's notifications) and is told when it committed.
   */
  withWrites?: JoinWrites;
  /** Set on the second try after the new id was taken (see the end of ingestNote). */
  retried?: boolean;
}

/**
 * Inserts a remote status from a checked Note (attributedTo == author, id on the author's host). A status already
 * stored under the same uri, or a tombstoned uri, makes this a no-op; a concurrent twin fails the batch on the uri.
 */
export async function ingestNote(r: Resolution, note: NormalizedNote, author: AccountRow, depth = 0, opts: IngestOptions = {}): Promise<StatusRow | null> {
  const { db } = r;
  if (author.suspendedAt || !author.domain || note.attributedTo !== author.uri || !sameHost(note.id, author.uri)) return null;
  const pre = opts.pre;
  const existing = pre ? pre.existing : await statusByUri(db, note.id);
  if (existing) return existing;
  if (pre ? pre.tombstoned : await isTombstoned(db, note.id)) return null;
  r.seen.add(note.id);

  const now = Date.now();
  const createdAt = Math.min(note.published ?? now, now);
  const id = snowflake(createdAt);
  const visibility = visibilityFromAudience(note.to, note.cc, author.followersUrl);
  const text = await renderNoteText(note);

  let parent: StatusRow | null = null;
  const isReply = !!note.inReplyTo && note.inReplyTo !== note.id;
  if (note.inReplyTo && note.inReplyTo !== note.id) {
    // A parent already stored is what resolveStatus and statusByUri would both return.
    parent = pre?.parent ?? (depth < MAX_REPLY_DEPTH ? await r.resolveStatus(r, note.inReplyTo, depth + 1) : await statusByUri(db, note.inReplyTo));
    if (parent?.reblogOfId) parent = null;
    // A reply to a local status its author may not see is kept, but not threaded: no reply count, no notification.
    if (parent?.local && !(await accountCanRead(db, author.id, parent.id))) parent = null;
  }
  // Read with the lookups unless a parent was fetched meantime (it may have stored accounts the note mentions).
  const mentioned = pre?.mentioned && (!isReply || pre.parent) ? pre.mentioned : await noteMentions(db, note);
  const conv = await conversationFor(db, note, parent, now, pre?.conversationId);
  const tags = tagNames(note.hashtags);
  const media = note.attachments.filter((a) => httpUrl(a.url)).map((a) => mediaRow(a, author.id, id, now));
  const poll = pollFields(note);
  const pollId = poll ? snowflake(now) : null;
  // A quote: the quoted status resolved and the authorization checked before the batch (quotes-inbound.ts); a legacy
  // quote that will not be shown links the quoted post in the content (quote-fallback.ts).
  const quote = await incomingQuoteStatement(r, note, author, id, depth);
  text.content = withQuoteFallback(text.content, quote?.fallback);

  const row: StatusRow = {
    id,
    uri: note.id,
    url: note.url && httpUrl(note.url) ? note.url : null,
    accountId: author.id,
    local: false,
    inReplyToId: parent?.id ?? null,
    inReplyToAccountId: parent ? (parent.accountId === author.id && parent.inReplyToAccountId ? parent.inReplyToAccountId : parent.accountId) : null,
    reblogOfId: null,
    conversationId: conv.id,
    text: "",
    content: text.content,
    spoilerText: text.spoilerText,
    sensitive: text.sensitive,
    visibility,
    language: text.language,
    applicationId: null,
    pollId,
    mediaIds: media.length ? media.map((m) => m.id) : null,
    emojiShortcodes: statusShortcodes(text.spoilerText, text.content),
    ...newStatusFields(createdAt, now),
    quoteApprovalPolicy: remoteQuotePolicy(note.canQuote, author),
  };
  const realtime = createdAt >= now - REALTIME_WINDOW_MS;
  const writes: Statement[] = [insertStatus(db, row)];
  if (quote) writes.push(quote.stmt);
  const emojis = upsertRemoteEmojisStatement(db, author.domain, note.emojis, now);
  if (emojis) writes.push(emojis);
  if (conv.insert) writes.push(insertConversation(db, conv.insert));
  if (mentioned.length) writes.push(mentionRowsStatement(db, id, mentioned, now));
  writes.push(...statusTagsStatements(db, id, tags, now));
  for (const m of media) writes.push(insertMedia(db, m));
  writes.push(
    searchIndexStatement(db, id, {
      spoilerText: text.spoilerText,
      text: htmlSearchText(text.content),
      pollOptions: poll?.options,
      mediaDescriptions: media.map((m) => m.description),
    }),
  );
  if (poll && pollId)
    writes.push(insertPoll(db, { id: pollId, statusId: id, accountId: author.id, hideTotals: false, createdAt: now, updatedAt: now, ...poll }));
  const mentionNotes: NewNotification[] = [];
  if (realtime) {
    for (const m of mentioned) {
      if (m.account.domain || (m.silent && visibility !== "direct")) continue;
      mentionNotes.push({ recipientId: m.account.id, fromAccountId: author.id, type: "mention", statusId: id, activityId: id });
    }
  }
  const notes = notificationWrites(db, mentionNotes);
  writes.push(...notes.stmts);
  // A status in real time reaches its local followers' feeds in the same batch (the first fan-out chunk; the rest, for
  // an account with many followers, follows as effects). A new note boosts nothing; without a quote it relates to no
  // other status, which saves the publish's rendering a statement.
  const chunk = realtime && !r.late ? firstChunk(db, r.cfg, id, quote ? undefined : []) : null;
  const fanFrom = writes.length;
  if (chunk) writes.push(...chunk.stmts);
  const cache = mediaCacheOf(r, author, media);
  let res: unknown[];
  const join = opts.withWrites;
  try {
    res = await runFinishing(db, writes, join && ((w) => join(w, notes.notify, [...cacheReadsOf(r, cache), ...(chunk?.ahead ? [chunk.ahead] : [])])));
  } catch (e) {
    if (!isUniqueViolation(e, "statuses")) throw e;
    const twin = await statusByUri(db, note.id);
    if (twin || opts.retried) return twin;
    // No twin: the id was taken. Ids are snowflakes of the published time, so two statuses published in the same
    // millisecond (a server's batch, or a test's fixed date) can draw the same one in different isolates or requests;
    // once more with a new id, rather than dropping the status.
    return ingestNote(r, note, author, depth, { withWrites: opts.withWrites, retried: true });
  }
  r.fx.add(...notes.notify);
  if (chunk) await chunk.record(r.fx, res, fanFrom);
  // Mastodon crawls the first link of every status it creates from a Create (LinkCrawlWorker), realtime or not.
  if (await cardUrlOfHtml(row.content, r.cfg, mentionUrlsOf(note))) r.fx.add({ type: "fetch_card", statusId: id });
  if (cache) r.fx.add(cache);
  return row;
}

/**
 * Applies Update{Note} to a remote status (the caller checked the author). Stale updates are ignored (C18); the
 * first edit stores the original as history; a change that only moves poll counts updates the poll alone.
 * Returns whether anything changed. `finish`: statements to commit with the update's writes (an inbox item's seen and
 * delete, withFinish), and what to call once they have.
 */
export async function applyNoteUpdate(r: Resolution, status: StatusRow, note: NormalizedNote, author: AccountRow, finishWith?: JoinWrites): Promise<boolean> {
  // Two Updates of one status processed at once serialise as REST edits do (services/statuses/status-revision.ts): the one that
  // lost reads the status again, and is stale now if the winner was newer. Past the last try, the D1 error is thrown:
  // transient, so the inbox item is retried later.
  return retryEdit(
    async (n) => {
      const current = n === 1 ? status : (await statusRows(r.db, { where: eq(statuses.id, status.id), limit: 1 }))[0];
      return current ? applyNoteUpdateOnce(r, current, note, author, finishWith) : false;
    },
    (e) => e,
  );
}

async function applyNoteUpdateOnce(r: Resolution, status: StatusRow, note: NormalizedNote, author: AccountRow, finishWith?: JoinWrites): Promise<boolean> {
  const { db } = r;
  const now = Date.now();
  if (status.reblogOfId || status.accountId !== author.id || note.id !== status.uri || note.attributedTo !== author.uri) return false;
  if (status.editedAt != null && (note.updated == null || note.updated <= status.editedAt)) return false;

  // The accounts the edited note mentions are read in the same batch.
  const mentionQuery = noteMentionsQuery(db, note);
  const reads = await db.batch([
    db.select().from(mediaAttachments).where(eq(mediaAttachments.statusId, status.id)),
    db.select().from(polls).where(eq(polls.statusId, status.id)).limit(1),
    db.select({ accountId: mentions.accountId }).from(mentions).where(eq(mentions.statusId, status.id)),
    db
      .selectDistinct({ accountId: statuses.accountId })
      .from(statuses)
      .innerJoin(accounts, and(eq(accounts.id, statuses.accountId), sql`${accounts.domain} IS NULL`))
      .where(eq(statuses.reblogOfId, status.id))
      .limit(500),
    localQuotesOfQuery(db, status.id, 500),
    storedQuoteQuery(db, status.id),
    ...(mentionQuery ? [mentionQuery] : []),
  ]);
  const [oldMedia, pollRows, oldMentions, rebloggers, quoters, storedQuote] = reads;
  const mentionRows = (reads[6] ?? []) as AccountRow[];
  const oldPoll = (pollRows as PollRow[])[0] ?? null;
  const text = await renderNoteText(note);
  // The link a legacy quote's content was given at ingestion, given again (else every Update would look like an edit).
  text.content = withQuoteFallback(text.content, storedQuoteFallback(storedQuote, note));
  const newPoll = pollFields(note);
  const attachments = note.attachments.filter((a) => httpUrl(a.url));
  const byUrl = new Map((oldMedia as MediaRow[]).map((m) => [m.remoteUrl, m]));

  const pollOptionsChanged = JSON.stringify(newPoll?.options ?? null) !== JSON.stringify(oldPoll?.options ?? null);
  const mediaChanged = attachments.length !== (status.mediaIds ?? []).length || attachments.some((a, i) => byUrl.get(a.url)?.id !== (status.mediaIds ?? [])[i]);
  const significant =
    text.content !== status.content || text.spoilerText !== status.spoilerText || text.sensitive !== status.sensitive || mediaChanged || pollOptionsChanged;

  if (!significant) {
    // Only the counts the origin reports move, and only while the status is as read: an edit that won meanwhile may
    // have changed the options (else the batch aborts and the Update is tried again).
    if (!newPoll || !oldPoll) return false;
    const counts = db
      .update(polls)
      .set({ ...newPoll, updatedAt: now })
      .where(and(eq(polls.id, oldPoll.id), sql`(SELECT edited_at FROM statuses WHERE id = ${padId(status.id)}) IS ${status.editedAt ?? null}`));
    await runFinishing(db, [counts, abortUnlessOneChanged(db)], finishWith && ((w) => finishWith(w, [])));
    return true;
  }

  const editedAt = nextEditedAt(status, Math.min(note.updated ?? now, now));
  // Poll: new options reset the local copy; otherwise only the counts the origin reports move.
  const pollWrites: Statement[] = [];
  let pollId: string | null = oldPoll?.id ?? null;
  if (newPoll && oldPoll) {
    pollWrites.push(
      db
        .update(polls)
        .set({ ...newPoll, updatedAt: now })
        .where(eq(polls.id, oldPoll.id)),
    );
    if (pollOptionsChanged) pollWrites.push(db.run(sql`DELETE FROM poll_votes WHERE poll_id = ${padId(oldPoll.id)}`));
  } else if (newPoll) {
    const newId = snowflake(now);
    pollId = newId;
    pollWrites.push(insertPoll(db, { id: newId, statusId: status.id, accountId: author.id, hideTotals: false, createdAt: now, updatedAt: now, ...newPoll }));
  } else if (oldPoll) {
    pollId = null;
    pollWrites.push(db.run(sql`DELETE FROM poll_votes WHERE poll_id = ${padId(oldPoll.id)}`), db.delete(polls).where(eq(polls.id, oldPoll.id)));
  }
  // Media: an attachment with the same URL keeps its row (and id); others are new rows; dropped ones are detached
  // but kept, so the history can still show them.
  const mediaWrites: Statement[] = [];
  const mediaIds: string[] = [];
  const addedMedia: MediaRow[] = [];
  for (const a of attachments) {
    const old = byUrl.get(a.url);
    if (old) {
      mediaIds.push(old.id);
      const fresh = mediaRow(a, author.id, status.id, now);
      // A cached file keeps the sizes and blurhash measured from it.
      const measured = old.fileKey ? {} : { blurhash: fresh.blurhash, meta: fresh.meta };
      mediaWrites.push(
        db
          .update(mediaAttachments)
          .set({ description: fresh.description, focusX: fresh.focusX, focusY: fresh.focusY, ...measured })
          .where(eq(mediaAttachments.id, old.id)),
      );
    } else {
      const m = mediaRow(a, author.id, status.id, now);
      mediaIds.push(m.id);
      addedMedia.push(m);
      mediaWrites.push(insertMedia(db, m));
    }
  }
  const gone = (oldMedia as MediaRow[]).filter((m) => !mediaIds.includes(m.id)).map((m) => padId(m.id));
  if (gone.length) mediaWrites.push(db.run(sql`UPDATE media_attachments SET status_id = NULL WHERE id IN ${valueList(gone)}`));

  // First the status, only if it is still as read (else the batch aborts and the Update is tried again), then the
  // original if the status has no history yet, then the rest.
  const writes: Statement[] = [
    db
      .update(statuses)
      .set({
        content: text.content,
        spoilerText: text.spoilerText,
        sensitive: text.sensitive,
        language: text.language ?? status.language,
        mediaIds: mediaIds.length ? mediaIds : null,
        emojiShortcodes: statusShortcodes(text.spoilerText, text.content),
        quoteApprovalPolicy: remoteQuotePolicy(note.canQuote, author),
        pollId,
        editedAt,
        updatedAt: now,
      })
      .where(and(eq(statuses.id, status.id), stillAsRead(status))),
    abortUnlessOneChanged(db),
    originalVersionStatement(db, status, oldPoll?.options ?? null),
    ...pollWrites,
    ...mediaWrites,
  ];

  const ps = padId(status.id);
  const mentioned = noteMentionsFrom(note, mentionRows);
  const had = new Set((oldMentions as { accountId: string }[]).map((m) => m.accountId));
  const keep = mentioned.map((m) => padId(m.account.id));
  writes.push(db.run(sql`DELETE FROM mentions WHERE status_id = ${ps} AND account_id NOT IN ${valueList(keep)}`));
  const added = mentioned.filter((m) => !had.has(m.account.id));
  if (added.length) writes.push(mentionRowsStatement(db, status.id, added, now));
  const notify: NotifyEffect[] = [];
  for (const m of added) {
    if (m.account.domain || (m.silent && status.visibility !== "direct")) continue;
    const note = notificationWrite(db, { recipientId: m.account.id, fromAccountId: author.id, type: "mention", statusId: status.id, activityId: status.id });
    writes.push(note.statement);
    notify.push(note.effect);
  }
  const tags = tagNames(note.hashtags);
  writes.push(db.run(sql`DELETE FROM status_tags WHERE status_id = ${ps}`));
  writes.push(...statusTagsStatements(db, status.id, tags, now));

  // Changed content loses its card and is crawled again (ProcessStatusUpdateService#reset_preview_card!).
  const contentChanged = text.content !== status.content;
  if (contentChanged) writes.push(resetCardStatement(db, status.id));
  const searchable = {
    spoilerText: text.spoilerText,
    text: htmlSearchText(text.content),
    pollOptions: newPoll?.options,
    mediaDescriptions: attachments.map((a) => a.description),
  };
  writes.push(searchIndexStatement(db, status.id, searchable));
  const emojis = author.domain ? upsertRemoteEmojisStatement(db, author.domain, note.emojis, now) : null;
  if (emojis) writes.push(emojis);
  // Ordered after the original and every earlier edit: its id is a snowflake of an edited_at later than theirs.
  const editId = snowflake(editedAt);
  writes.push(
    insertStatusEdit(db, {
      id: editId,
      statusId: status.id,
      accountId: author.id,
      text: "",
      content: text.content,
      spoilerText: text.spoilerText,
      sensitive: text.sensitive,
      mediaIds,
      pollOptions: newPoll?.options ?? null,
      createdAt: editedAt,
    }),
  );
  const updates = notificationWrites(
    db,
    (rebloggers as { accountId: string }[]).map((rb) => ({
      recipientId: rb.accountId,
      fromAccountId: author.id,
      type: "update" as const,
      statusId: status.id,
      activityId: editId,
    })),
  );
  const quoted = quotedUpdateNotifications(db, quoters, author.id, editId);
  writes.push(...updates.stmts, ...quoted.stmts);
  notify.push(...updates.notify, ...quoted.notify);
  const cache = mediaCacheOf(r, author, addedMedia);
  // Its publish reads with the writes too (when its effects run here next).
  const updated: Effect = { type: "status_updated", statusId: status.id };
  const publishRead = publishUpdateReadAhead(db, r.cfg, status.id, (a) => carryUpdateAhead(r.fx, updated, a));
  const ahead = [...cacheReadsOf(r, cache), ...(publishRead ? [publishRead] : [])];
  await runFinishing(db, writes, finishWith && ((w) => finishWith(w, notify, ahead)));
  r.fx.add(...notify);
  r.fx.add(updated);
  if (cache) r.fx.add(cache);
  if (contentChanged && (await cardUrlOfHtml(text.content, r.cfg, mentionUrlsOf(note)))) r.fx.add({ type: "fetch_card", statusId: status.id });
  return true;
}
