// Posting a status (POST /api/v1/statuses): validation, then at most one read batch (mentioned accounts, reply
// parent, media, idempotency key) and one write batch; the response is rendered from memory, so a plain post costs
// the viewer lookup plus the write.
import { and, eq, gt, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { insertConversation, insertPoll, insertStatus } from "../../db/inserts";
import { idList, runBatch, type Statement } from "../../db/client";
import { accounts, idempotencyKeys, mediaAttachments, statuses, type Visibility } from "../../db/schema";
import {
  emptyBundle,
  loadLinkedCollections,
  newStatusFields,
  renderStatus,
  renderStatusFrom,
  type MastodonStatus,
  type MediaRow,
  type StatusRow,
} from "../../entities/statuses/status";
import type { MastodonScheduledStatus } from "../../entities/statuses/scheduled-status";
import { renderAccount } from "../../entities/accounts/account";
import { accountUrl, statusUri, statusUrl, tagUrl } from "../../entities/urls";
import type { Config } from "../../env";
import { sha256Hex } from "../../lib/security/crypto";
import { notFound, unprocessable, validationFailed } from "../../lib/http/errors";
import { padId, parseId, snowflake } from "../../lib/text/ids";
import { cleanText, extractEntities, MAX_SOURCE_CHARS, normalizeLanguage, renderPlainText, statusLength, type Entity } from "../../lib/text/text";
import type { UserViewer } from "../../db/viewer";
import type { AccountRow, StoredEmoji } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { NotifyEffect } from "../../effects/types";
import { resolveMentionHandles } from "../../federation/remote/resolve";
import { notificationWrites } from "../notifications/notifications";
import { newPollRow, validatePoll, type PollInput, type PollRow, type ValidPoll } from "./polls";
import { cardUrlOfText } from "./preview-cards";
import { searchIndexStatement } from "./search-index";
import { localEmojisStatement, statusShortcodes } from "./custom-emojis";
import { parseScheduledAt, scheduleStatus } from "./scheduled-statuses";
import { hashtagsOf, statusTagsStatements, type TagName } from "../tags/tags";
import { statusReadableBy } from "../../policy/visibility";
import { httpUrl } from "../../lib/http/urls";
import {
  attachQuoteStatements,
  checkQuote,
  policyFromParam,
  QUOTED_NOT_FOUND,
  quotedStatusQuery,
  quotedTargetOf,
  type QuotePolicyParam,
  type QuotedTarget,
} from "./quotes";
import { ApiError } from "../../lib/http/errors";
import { accountRows, statusRows } from "../../db/table-rows";

export const MAX_STATUS_CHARS = 500;
export const MAX_MEDIA_ATTACHMENTS = 4;
const IDEMPOTENCY_TTL_MS = 3600_000;
const VISIBILITIES: readonly Visibility[] = ["public", "unlisted", "private", "direct"];

export interface StatusInput {
  status?: string;
  spoiler_text?: string;
  sensitive?: boolean;
  visibility?: string;
  language?: string | null;
  in_reply_to_id?: string;
  media_ids?: string[];
  poll?: PollInput;
  scheduled_at?: string;
  allowed_mentions?: string[];
  quoted_status_id?: string;
  quote_approval_policy?: QuotePolicyParam;
}

// ---- pieces shared with editing ----

/** Text and content warning after cleaning, with Mastodon's length rule (security A1, A2, A14, A15). */
export function checkText(rawText: string | undefined, rawSpoiler: string | undefined, hasAttachments: boolean) {
  if ((rawText?.length ?? 0) > MAX_SOURCE_CHARS || (rawSpoiler?.length ?? 0) > MAX_SOURCE_CHARS) {
    throw validationFailed(`Text character limit of ${MAX_STATUS_CHARS} exceeded`);
  }
  const text = cleanText(rawText ?? "");
  const spoiler = cleanText(rawSpoiler ?? "");
  if (!hasAttachments && text.trim() === "") throw validationFailed("Text can't be blank");
  if (statusLength(text, spoiler) > MAX_STATUS_CHARS) throw validationFailed(`Text character limit of ${MAX_STATUS_CHARS} exceeded`);
  return { text, spoiler };
}

/** Distinct media ids in the order given; at most 4 (A3). */
export function checkMediaIds(raw: string[] | undefined): string[] {
  const ids: string[] = [];
  for (const r of raw ?? []) {
    const id = parseId(r);
    if (!id) throw validationFailed("Media attachment not found");
    if (!ids.includes(id)) ids.push(id);
  }
  if (ids.length > MAX_MEDIA_ATTACHMENTS) throw validationFailed(`Cannot attach more than ${MAX_MEDIA_ATTACHMENTS} files`);
  return ids;
}

/**
 * Each id must be the poster's, finished, and unattached (or attached to `ownStatusId` when editing, or reserved for
 * `ownScheduledId` when publishing that scheduled status): A4, F6.
 */
export function checkMediaRows(
  ids: string[],
  rows: MediaRow[],
  accountId: string,
  ownStatusId: string | null = null,
  ownScheduledId: string | null = null,
): MediaRow[] {
  const byId = new Map(rows.map((m) => [m.id, m]));
  const out: MediaRow[] = [];
  for (const id of ids) {
    const m = byId.get(id);
    const attachedElsewhere = m && ((m.statusId && m.statusId !== ownStatusId) || (m.scheduledStatusId && m.scheduledStatusId !== ownScheduledId));
    if (!m || m.accountId !== accountId || attachedElsewhere) throw validationFailed(`Media attachment not found: ${id}`);
    if (m.processing) throw validationFailed("Cannot attach files that have not finished processing. Try again in a moment!");
    out.push(m);
  }
  return out;
}

interface MentionKey {
  username: string; // lower case
  domain: string; // lower case, "" for local
}

/** The distinct accounts a text names: `@user` and `@user@our.domain` are local. */
export function mentionKeys(entities: Entity[], cfg: Config): MentionKey[] {
  const out = new Map<string, MentionKey>();
  const local = cfg.domain.toLowerCase();
  for (const e of entities) {
    if (e.kind !== "mention") continue;
    let domain = (e.domain ?? "").toLowerCase();
    if (domain === local) domain = "";
    const k = { username: e.username.toLowerCase(), domain };
    out.set(`${k.username}@${k.domain}`, k);
  }
  return [...out.values()];
}

const keyOf = (username: string, domain: string | null) => `${username.toLowerCase()}@${(domain ?? "").toLowerCase()}`;

/** One query: local and already-known remote accounts named in the text (unknown names stay plain text). */
export function mentionedAccountsQuery(db: DB, keys: MentionKey[]) {
  const pairs = JSON.stringify(keys.map((k) => [k.username, k.domain]));
  return accountRows(db, {
    // Each pair probes accounts_username_domain (lower(username), coalesce(domain, '')); the row value IN (…) form of
    // the same test could not use that expression index and scanned every account.
    where: sql`${accounts.id} IN (SELECT ma.id FROM json_each(${pairs}) mj JOIN accounts ma
        ON lower(ma.username) = json_extract(mj.value, '$[0]') AND coalesce(ma.domain, '') = json_extract(mj.value, '$[1]'))
      AND ${accounts.suspendedAt} IS NULL`,
  });
}

/** HTML content with mentions linked to the resolved accounts. */
export function renderContent(cfg: Config, text: string, found: AccountRow[]): { content: string; mentioned: AccountRow[] } {
  const byKey = new Map(found.map((a) => [keyOf(a.username, a.domain), a]));
  const local = cfg.domain.toLowerCase();
  const used = new Map<string, AccountRow>();
  const content = renderPlainText(text, {
    mention: (e) => {
      const d = (e.domain ?? "").toLowerCase();
      const a = byKey.get(keyOf(e.username, d === local ? "" : d));
      if (!a) return null;
      used.set(a.id, a);
      // Remote rows stored before URLs were checked may hold another scheme: such a mention stays plain text.
      const url = httpUrl(a.url) ?? (a.domain ? httpUrl(a.uri) : accountUrl(cfg, a.username));
      return url ? { url, username: a.username } : null;
    },
    tagUrl: (name) => tagUrl(cfg, name),
  });
  return { content, mentioned: [...used.values()] };
}

/**
 * Mention rows (one statement) and mention notifications for the local ones: the statements, and the notifications'
 * `notify` effects for the caller to record once its batch committed.
 */
export function mentionStatements(
  db: DB,
  statusId: string,
  authorId: string,
  mentioned: AccountRow[],
  now: number,
): { stmts: Statement[]; notify: NotifyEffect[] } {
  if (mentioned.length === 0) return { stmts: [], notify: [] };
  const rows = mentioned.map((a) => ({ id: snowflake(now), account: a }));
  const json = JSON.stringify(rows.map((r) => [padId(r.id), padId(r.account.id)]));
  const notes = notificationWrites(
    db,
    rows
      .filter((r) => !r.account.domain)
      .map((r) => ({ recipientId: r.account.id, fromAccountId: authorId, type: "mention" as const, statusId, activityId: r.id })),
  );
  return {
    stmts: [
      db.run(sql`INSERT OR IGNORE INTO mentions (id, status_id, account_id, silent)
      SELECT json_extract(j.value, '$[0]'), ${padId(statusId)}, json_extract(j.value, '$[1]'), 0 FROM json_each(${json}) j`),
      ...notes.stmts,
    ],
    notify: notes.notify,
  };
}

function isIdempotencyConflict(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    if (/idempotency_keys/.test(String((e as { message?: unknown }).message ?? e))) return true;
  }
  return false;
}

export interface PostResult {
  id: string;
  created: boolean;
  /** The Status entity; with scheduled_at, the ScheduledStatus entity (POST /api/v1/statuses answers either). */
  status: MastodonStatus | MastodonScheduledStatus;
}

export interface PostOptions {
  /**
   * Publishing a scheduled status (src/services/statuses/publish-scheduled.ts): its reserved media may be attached, and the
   * write batch deletes the scheduled row and commits only while the row still exists under this claim (the
   * idempotency key's row is inserted from it, so a reschedule, a delete or a second publication rolls it back).
   * Requires an idempotency key (`scheduled:<id>`).
   */
  scheduled?: { id: string; claimedAt: number };
}

export async function postStatus(
  db: DB,
  fx: Effects,
  cfg: Config,
  viewer: UserViewer,
  input: StatusInput,
  idempotencyKey: string | null,
  opts: PostOptions = {},
): Promise<PostResult> {
  const now = Date.now();
  const me = viewer.account;
  // An account that moved posts no more (account migration, src/services/accounts/account-migration.ts).
  if (me.movedToAccountId) throw validationFailed("This account has moved to another account and can no longer post");
  // With scheduled_at the post passes every check below, then is stored for later instead (Mastodon's schedule_status!).
  const scheduledAt = input.scheduled_at && !opts.scheduled ? parseScheduledAt(input.scheduled_at, now) : null;

  const mediaIds = checkMediaIds(input.media_ids);
  const poll: ValidPoll | null = input.poll ? validatePoll(input.poll, now) : null;
  if (poll && mediaIds.length) throw validationFailed("Cannot attach both a poll and media to a post");
  const { text, spoiler } = checkText(input.status, input.spoiler_text, mediaIds.length > 0 || !!poll);

  const settings = viewer.user.settings ?? {};
  const visibility = (input.visibility ?? settings["posting:default:visibility"] ?? "public") as Visibility;
  if (!VISIBILITIES.includes(visibility)) throw validationFailed("Visibility is not included in the list");
  const language = input.language !== undefined ? normalizeLanguage(input.language) : normalizeLanguage(settings["posting:default:language"]);
  const sensitive = (input.sensitive ?? settings["posting:default:sensitive"] ?? false) || spoiler.trim() !== "";

  const entities = extractEntities(text);
  const keys = mentionKeys(entities, cfg);
  const tagNames = hashtagsOf(entities);
  const replyId = input.in_reply_to_id ? parseId(input.in_reply_to_id) : null;
  if (input.in_reply_to_id && !replyId) throw notFound();
  const quotedId = input.quoted_status_id ? parseId(input.quoted_status_id) : null;
  if (input.quoted_status_id && !quotedId) throw new ApiError(404, QUOTED_NOT_FOUND);
  const idemKey = idempotencyKey ? (idempotencyKey.length > 200 ? await sha256Hex(idempotencyKey) : idempotencyKey) : null;

  // ---- the one read batch, only with the parts this post needs ----
  let found: AccountRow[] = [];
  let parent: StatusRow | null = null;
  let mediaRows: MediaRow[] = [];
  let quoted: QuotedTarget | null = null;
  // A scheduled post's key names a scheduled status, not a status (scheduleStatus looks it up).
  const idemLookup = !!idemKey && scheduledAt === null;
  if (keys.length || replyId || mediaIds.length || idemLookup || quotedId) {
    const q: Statement[] = [];
    const at: Record<string, number> = {};
    if (idemLookup) {
      at.idem = q.length;
      q.push(
        db
          .select({ statusId: idempotencyKeys.statusId })
          .from(idempotencyKeys)
          .where(and(eq(idempotencyKeys.accountId, me.id), eq(idempotencyKeys.key, idemKey), gt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS))),
      );
    }
    if (keys.length) {
      at.mentions = q.length;
      q.push(mentionedAccountsQuery(db, keys));
    }
    if (replyId) {
      at.reply = q.length;
      q.push(statusRows(db, { where: and(eq(statuses.id, replyId), sql`${statuses.reblogOfId} IS NULL`, statusReadableBy(me.id)), limit: 1 }));
    }
    if (mediaIds.length) {
      at.media = q.length;
      q.push(
        db
          .select()
          .from(mediaAttachments)
          .where(sql`${mediaAttachments.id} IN ${idList(mediaIds)}`),
      );
    }
    if (quotedId) {
      at.quote = q.length;
      q.push(quotedStatusQuery(db, me.id, quotedId));
    }
    const res = (await runBatch(db, q)) as unknown[][];
    if (at.idem !== undefined) {
      const hit = res[at.idem]?.[0] as { statusId: string } | undefined;
      if (hit) return existing(db, cfg, hit.statusId, me.id);
    }
    if (at.mentions !== undefined) found = res[at.mentions] as AccountRow[];
    // Remote handles never seen here are looked up now, so the mention is in the post's first delivery.
    const known = new Set(found.map((a) => keyOf(a.username, a.domain)));
    const unseen = keys.filter((k) => k.domain && !known.has(keyOf(k.username, k.domain)));
    if (unseen.length) found = [...found, ...(await resolveMentionHandles(db, cfg, unseen))];
    if (at.reply !== undefined) {
      parent = (res[at.reply]?.[0] as StatusRow | undefined) ?? null;
      if (!parent) throw notFound();
    }
    if (at.media !== undefined) mediaRows = checkMediaRows(mediaIds, res[at.media] as MediaRow[], me.id, null, opts.scheduled?.id ?? null);
    if (at.quote !== undefined) quoted = quotedTargetOf(res[at.quote]);
  }

  const { content, mentioned } = renderContent(cfg, text, found);
  // Quoting (Mastodon 4.5): the quoted status must be quotable; a private one keeps the post private at most.
  const postVisibility = quotedId
    ? (checkQuote(
        quoted,
        me.id,
        visibility,
        mentioned.map((a) => a.id),
      ) as Visibility)
    : visibility;
  const quotePolicy = policyFromParam(input.quote_approval_policy ?? "public", postVisibility);
  if (input.allowed_mentions) {
    const allowed = new Set(input.allowed_mentions.map((x) => parseId(x)).filter(Boolean));
    const unexpected = mentioned.filter((a) => !allowed.has(a.id));
    if (unexpected.length) {
      throw unprocessable("Validation failed: Post would mention unexpected accounts", {
        unexpected_accounts: unexpected.map((a) => renderAccount(cfg, a)),
      });
    }
  }

  if (scheduledAt !== null) {
    const scheduled = await scheduleStatus(
      db,
      cfg,
      me.id,
      {
        scheduledAt,
        params: {
          text,
          media_ids: mediaIds.length ? mediaIds : null,
          sensitive: input.sensitive ?? null,
          spoiler_text: input.spoiler_text !== undefined ? spoiler : null,
          visibility: input.visibility !== undefined ? visibility : null,
          language: input.language != null ? language : null,
          scheduled_at: null,
          poll: poll ? { options: poll.options, expires_in: input.poll!.expires_in!, multiple: poll.multiple, hide_totals: poll.hideTotals } : null,
          idempotency: null,
          with_rate_limit: false,
          in_reply_to_id: parent?.id ?? null,
          // Checked now (checkQuote above) and again when it is published, as Mastodon schedules a quote.
          quoted_status_id: quotedId,
          quote_approval_policy: input.quote_approval_policy ?? "public",
          ...(input.allowed_mentions ? { allowed_mentions: input.allowed_mentions.map((x) => parseId(x)).filter((x): x is string => !!x) } : {}),
        },
        media: mediaRows,
        applicationId: viewer.applicationId,
        origin: cfg.origin,
        idempotencyKey: idemKey,
      },
      now,
    );
    return { id: scheduled.id, created: scheduled.created, status: scheduled.entity };
  }

  // ---- the write batch ----
  const id = snowflake(now);
  let conversationId: string;
  const writes: Statement[] = [];
  if (idemKey) {
    // First, so a parallel twin fails on the primary key before anything else is written.
    writes.push(
      db.run(sql`DELETE FROM idempotency_keys WHERE account_id = ${padId(me.id)} AND key = ${idemKey} AND created_at <= ${now - IDEMPOTENCY_TTL_MS}`),
      opts.scheduled
        ? // The key comes from the scheduled row under this claim; without it the key is NULL and the batch fails.
          db.run(sql`INSERT INTO idempotency_keys (account_id, key, status_id, created_at) VALUES (${padId(me.id)},
            (SELECT ${idemKey} FROM scheduled_statuses WHERE id = ${padId(opts.scheduled.id)} AND claimed_at = ${opts.scheduled.claimedAt} AND failed_at IS NULL),
            ${padId(id)}, ${now})`)
        : db.insert(idempotencyKeys).values({ accountId: me.id, key: idemKey, statusId: id, createdAt: now }),
    );
  }
  if (parent?.conversationId) conversationId = parent.conversationId;
  else {
    conversationId = snowflake(now);
    writes.push(insertConversation(db, { id: conversationId, uri: null, createdAt: now }));
  }
  const pollRow: PollRow | null = poll ? newPollRow(snowflake(now), id, me.id, poll, now) : null;
  const row: StatusRow = {
    id,
    uri: statusUri(cfg, me.username, id),
    url: statusUrl(cfg, me.username, id),
    accountId: me.id,
    local: true,
    inReplyToId: parent?.id ?? null,
    // A self-reply carries the thread's addressee on (Mastodon's carried_over_reply_to_account_id).
    inReplyToAccountId: parent ? (parent.accountId === me.id && parent.inReplyToAccountId ? parent.inReplyToAccountId : parent.accountId) : null,
    reblogOfId: null,
    conversationId,
    text,
    content,
    spoilerText: spoiler,
    sensitive,
    visibility: postVisibility,
    language,
    applicationId: viewer.applicationId,
    pollId: pollRow?.id ?? null,
    mediaIds: mediaIds.length ? mediaIds : null,
    emojiShortcodes: statusShortcodes(spoiler, text),
    ...newStatusFields(now),
    quoteApprovalPolicy: quotePolicy,
  };
  writes.push(insertStatus(db, row));
  // The author sees their own post at once, as on Mastodon: their feed row is written with it (fan-out does the rest).
  writes.push(
    db.run(sql`INSERT OR IGNORE INTO home_feed (account_id, status_id, reblog_of_id, author_id) VALUES (${padId(me.id)}, ${padId(id)}, NULL, ${padId(me.id)})`),
  );
  writes.push(...statusTagsStatements(db, id, tagNames, now));
  const mentionWrites = mentionStatements(db, id, me.id, mentioned, now);
  writes.push(...mentionWrites.stmts);
  if (mediaIds.length) {
    writes.push(
      db.run(sql`UPDATE media_attachments SET status_id = ${padId(id)}, scheduled_status_id = NULL
        WHERE id IN ${idList(mediaIds)} AND account_id = ${padId(me.id)} AND status_id IS NULL
          AND (scheduled_status_id IS NULL OR scheduled_status_id = ${opts.scheduled ? padId(opts.scheduled.id) : ""})`),
    );
  }
  if (pollRow) writes.push(insertPoll(db, pollRow));
  const quote = quoted ? attachQuoteStatements(db, { statusId: id, author: me, target: quoted, now }) : null;
  if (quote) writes.push(...quote.stmts);
  writes.push(
    searchIndexStatement(db, id, { spoilerText: spoiler, text, pollOptions: pollRow?.options, mediaDescriptions: mediaRows.map((m) => m.description) }),
  );
  if (opts.scheduled) writes.push(db.run(sql`DELETE FROM scheduled_statuses WHERE id = ${padId(opts.scheduled.id)}`));
  // The custom emojis the response shows, read in the write batch (last, so the indexes above do not move).
  if (row.emojiShortcodes) writes.push(localEmojisStatement(db, row.emojiShortcodes));
  let written: unknown[];
  try {
    written = await commit(db, fx, writes, (fx) => {
      fx.add(...mentionWrites.notify, ...(quote?.notify ?? []));
      fx.add({ type: "fanout", statusId: id });
      fx.federate({ kind: "create", statusId: id });
      // A quote of a remote status asks its author for an authorization once the post is out (QuoteRequestWorker).
      if (quote?.quote.state === "pending") fx.federate({ kind: "quote_request", quoteId: quote.quote.id });
      // Its first link's preview card, fetched after the response (Mastodon's LinkCrawlWorker).
      if (cardUrlOfText(text, cfg)) fx.add({ type: "fetch_card", statusId: id });
    });
  } catch (err) {
    if (idemKey && isIdempotencyConflict(err)) {
      const [hit] = await db
        .select({ statusId: idempotencyKeys.statusId })
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.accountId, me.id), eq(idempotencyKeys.key, idemKey)));
      if (hit) return existing(db, cfg, hit.statusId, me.id);
    }
    throw err;
  }

  // A quote shows the quoted status in full: read back in one batch rather than rebuilt here.
  if (quote) return existing(db, cfg, id, me.id, true);

  // ---- render from what we wrote ----
  const b = emptyBundle(me.id);
  b.statuses.set(id, row);
  b.accounts.set(me.id, { ...me, statusesCount: me.statusesCount + 1, lastStatusAt: now });
  if (mediaRows.length)
    b.media.set(
      id,
      mediaRows.map((m) => ({ ...m, statusId: id })),
    );
  if (mentioned.length) {
    b.mentions.set(id, mentioned);
    b.mentionIds.set(id, new Set(mentioned.map((a) => a.id)));
  }
  if (tagNames.length)
    b.tags.set(
      id,
      tagNames.map((t: TagName) => t.name),
    );
  if (pollRow) b.polls.set(id, pollRow);
  if (viewer.applicationId && viewer.application) b.apps.set(viewer.applicationId, viewer.application);
  if (row.emojiShortcodes) b.emojis.set(id, written.at(-1) as StoredEmoji[]);
  await loadLinkedCollections(db, b, me.id);
  return { id, created: true, status: renderStatusFrom(cfg, b, id)! };
}

async function existing(db: DB, cfg: Config, statusId: string, viewerId: string, created = false): Promise<PostResult> {
  const status = await renderStatus(db, cfg, statusId, viewerId);
  if (!status) throw notFound();
  return { id: statusId, created, status };
}
