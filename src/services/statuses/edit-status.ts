// Editing a status (PUT /api/v1/statuses/:id), its edit history and its source. The first edit also stores the
// original as a status_edits row, so history always starts at what was first posted. Concurrent edits of one status
// serialise (./status-revision.ts): each applies on the state it read, or reads again.
import { and, asc, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { insertPoll, insertStatusEdit } from "../../db/inserts";
import { idList, type Statement } from "../../db/client";
import { mediaAttachments, mentions, polls, statusEdits, statuses } from "../../db/schema";
import { loadStatusBundle, renderStatus, renderStatusFrom, type MediaRow, type StatusRow } from "../../entities/statuses/status";
import { renderStatusEdit, renderUneditedVersion, type MastodonStatusEdit } from "../../entities/statuses/status-edit";
import { renderStatusSource, type MastodonStatusSource } from "../../entities/statuses/status-source";
import type { Config } from "../../env";
import { ApiError, notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { cleanText, extractEntities, normalizeLanguage } from "../../lib/text/text";
import type { UserViewer } from "../../db/viewer";
import type { AccountRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { NotifyEffect } from "../../effects/types";
import { notificationWrites } from "../notifications/notifications";
import { localQuotesOfQuery, quotedUpdateNotifications } from "./quotes";
import { newPollRow, validatePoll, type PollInput, type PollRow } from "./polls";
import { checkMediaIds, checkMediaRows, checkText, mentionedAccountsQuery, mentionKeys, mentionStatements, renderContent } from "./post-status";
import { statusShortcodes } from "./custom-emojis";
import { cardUrlOfText, resetCardStatement } from "./preview-cards";
import { searchIndexStatement } from "./search-index";
import { hashtagsOf, statusTagsStatements } from "../tags/tags";
import { statusRows } from "../../db/table-rows";
import { abortUnlessOneChanged, nextEditedAt, originalVersionStatement, retryEdit, stillAsRead } from "./status-revision";

const MAX_DESCRIPTION = 1500;
const MAX_UPDATE_NOTIFICATIONS = 500;

export interface MediaAttributeInput {
  id?: string;
  description?: string;
  focus?: string;
}

export interface EditInput {
  status?: string;
  spoiler_text?: string;
  sensitive?: boolean;
  language?: string | null;
  media_ids?: string[];
  media_attributes?: MediaAttributeInput[];
  poll?: PollInput;
}

function parseFocus(raw: string): [number, number] {
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(raw);
  const x = m ? Number(m[1]) : NaN;
  const y = m ? Number(m[2]) : NaN;
  if (!(x >= -1 && x <= 1 && y >= -1 && y <= 1)) throw validationFailed("Focus is invalid");
  return [Math.round(x * 1000), Math.round(y * 1000)];
}

export async function editStatus(db: DB, fx: Effects, cfg: Config, viewer: UserViewer, statusId: string, input: EditInput) {
  // Concurrent edits serialise: an edit that lost a race to another reads again and applies on what won
  // (./status-revision.ts); one that keeps losing is refused.
  await retryEdit(
    () => writeEdit(db, fx, cfg, viewer, statusId, input),
    () => new ApiError(409, "The status was edited by another request at the same time; try again"),
  );
  const out = await renderStatus(db, cfg, statusId, viewer.account.id);
  if (!out) throw notFound();
  return out;
}

/** One try of an edit: reads the status and what it touches, then writes in one batch that applies only on that state. */
async function writeEdit(db: DB, fx: Effects, cfg: Config, viewer: UserViewer, statusId: string, input: EditInput) {
  const now = Date.now();
  const me = viewer.account;
  const newMediaIds = input.media_ids !== undefined ? checkMediaIds(input.media_ids) : null;
  const rawText = input.status;
  const keys = rawText !== undefined ? mentionKeys(extractEntities(cleanText(rawText)), cfg) : [];

  const q = [
    statusRows(db, { where: and(eq(statuses.id, statusId), eq(statuses.accountId, me.id), sql`${statuses.reblogOfId} IS NULL`), limit: 1 }),
    db.select({ accountId: mentions.accountId }).from(mentions).where(eq(mentions.statusId, statusId)),
    db
      .select()
      .from(mediaAttachments)
      .where(sql`${mediaAttachments.statusId} = ${padId(statusId)} OR ${mediaAttachments.id} IN ${idList(newMediaIds ?? [])}`),
    db.select().from(polls).where(eq(polls.statusId, statusId)).limit(1),
    db.selectDistinct({ accountId: statuses.accountId }).from(statuses).where(eq(statuses.reblogOfId, statusId)).limit(MAX_UPDATE_NOTIFICATIONS),
    localQuotesOfQuery(db, statusId, MAX_UPDATE_NOTIFICATIONS),
  ] as const;
  const res = keys.length ? await db.batch([...q, mentionedAccountsQuery(db, keys)]) : await db.batch([...q]);
  const s = (res[0] as StatusRow[])[0];
  if (!s) throw notFound();
  const oldMentionIds = new Set((res[1] as { accountId: string }[]).map((m) => m.accountId));
  const mediaRows = res[2] as MediaRow[];
  const oldPoll = (res[3] as PollRow[])[0] ?? null;
  const rebloggers = (res[4] as { accountId: string }[]).map((r) => r.accountId);
  const quoters = res[5] as { status_id: string; account_id: string }[];
  const found = keys.length ? (res[6] as AccountRow[]) : [];

  const mediaIds = newMediaIds ?? s.mediaIds ?? [];
  const media = checkMediaRows(mediaIds, mediaRows, me.id, statusId);
  const newPoll = input.poll ? validatePoll(input.poll, now) : null;
  if (newPoll && mediaIds.length) throw validationFailed("Cannot attach both a poll and media to a post");
  const { text, spoiler } = checkText(rawText ?? s.text, input.spoiler_text ?? s.spoilerText, mediaIds.length > 0 || !!newPoll);
  const language = input.language !== undefined ? normalizeLanguage(input.language) : s.language;
  const sensitive = (input.sensitive ?? s.sensitive) || spoiler.trim() !== "";
  const { content, mentioned } = rawText !== undefined ? renderContent(cfg, text, found) : { content: s.content, mentioned: null as AccountRow[] | null };

  // Descriptions and focus of the attached media may change with the edit (spec: allowed after posting).
  const attrUpdates: { id: string; description?: string; focus?: [number, number] }[] = [];
  for (const a of input.media_attributes ?? []) {
    if (!a.id || !media.some((m) => m.id === a.id)) throw validationFailed("Media attachment not found");
    const description = a.description !== undefined ? cleanText(a.description) : undefined;
    if (description && description.length > MAX_DESCRIPTION) throw validationFailed(`Description is too long (maximum is ${MAX_DESCRIPTION} characters)`);
    attrUpdates.push({ id: a.id, description, focus: a.focus ? parseFocus(a.focus) : undefined });
  }

  const ps = padId(statusId);
  const editedAt = nextEditedAt(s, now);
  // Poll: a changed option list (or kind) resets the votes; no poll in the edit removes it.
  const pollWrites: Statement[] = [];
  let pollId: string | null = oldPoll?.id ?? null;
  if (newPoll && !oldPoll) {
    const row = newPollRow(snowflake(now), statusId, me.id, newPoll, now);
    pollId = row.id;
    pollWrites.push(insertPoll(db, row));
  } else if (newPoll && oldPoll) {
    const changed = JSON.stringify(newPoll.options) !== JSON.stringify(oldPoll.options) || newPoll.multiple !== oldPoll.multiple;
    if (changed) {
      pollWrites.push(
        db.run(sql`DELETE FROM poll_votes WHERE poll_id = ${padId(oldPoll.id)}`),
        db
          .update(polls)
          .set({
            options: newPoll.options,
            votesPerOption: newPoll.options.map(() => 0),
            votesCount: 0,
            votersCount: 0,
            multiple: newPoll.multiple,
            hideTotals: newPoll.hideTotals,
            expiresAt: newPoll.expiresAt,
            updatedAt: now,
          })
          .where(eq(polls.id, oldPoll.id)),
      );
    } else {
      pollWrites.push(db.update(polls).set({ hideTotals: newPoll.hideTotals, updatedAt: now }).where(eq(polls.id, oldPoll.id)));
    }
  } else if (!newPoll && oldPoll) {
    pollId = null;
    pollWrites.push(db.run(sql`DELETE FROM poll_votes WHERE poll_id = ${padId(oldPoll.id)}`), db.delete(polls).where(eq(polls.id, oldPoll.id)));
  }

  // First the status, only if it is still as read (else the batch aborts and the edit is tried again), then the
  // original if the status has no history yet, then the rest.
  const writes: Statement[] = [
    db
      .update(statuses)
      .set({
        text,
        content,
        spoilerText: spoiler,
        sensitive,
        language,
        mediaIds: mediaIds.length ? mediaIds : null,
        emojiShortcodes: statusShortcodes(spoiler, text),
        pollId,
        editedAt,
        updatedAt: now,
      })
      .where(and(eq(statuses.id, statusId), stillAsRead(s))),
    abortUnlessOneChanged(db),
    originalVersionStatement(db, s, oldPoll?.options ?? null),
    ...pollWrites,
    db.run(sql`UPDATE media_attachments SET status_id = NULL WHERE status_id = ${ps} AND id NOT IN ${idList(mediaIds)}`),
  ];
  if (mediaIds.length) {
    writes.push(
      db.run(sql`UPDATE media_attachments SET status_id = ${ps}
        WHERE id IN ${idList(mediaIds)} AND account_id = ${padId(me.id)} AND status_id IS NULL AND scheduled_status_id IS NULL`),
    );
  }
  for (const a of attrUpdates) {
    const set: Partial<MediaRow> = {};
    if (a.description !== undefined) set.description = a.description;
    if (a.focus) [set.focusX, set.focusY] = a.focus;
    if (Object.keys(set).length)
      writes.push(
        db
          .update(mediaAttachments)
          .set(set)
          .where(and(eq(mediaAttachments.id, a.id), eq(mediaAttachments.accountId, me.id))),
      );
  }
  const notify: NotifyEffect[] = [];
  if (mentioned) {
    const keep = mentioned.map((a) => a.id);
    writes.push(db.run(sql`DELETE FROM mentions WHERE status_id = ${ps} AND account_id NOT IN ${idList(keep)}`));
    const added = mentionStatements(
      db,
      statusId,
      me.id,
      mentioned.filter((a) => !oldMentionIds.has(a.id)),
      now,
    );
    writes.push(...added.stmts);
    notify.push(...added.notify);
    const tagNames = hashtagsOf(text);
    writes.push(db.run(sql`DELETE FROM status_tags WHERE status_id = ${ps}`));
    writes.push(...statusTagsStatements(db, statusId, tagNames, now));
  }
  // Changed text loses its card and is crawled again (Mastodon's UpdateStatusService#reset_preview_card!).
  const textChanged = text !== s.text;
  if (textChanged) writes.push(resetCardStatement(db, statusId));
  const descriptions = media.map((m) => attrUpdates.find((a) => a.id === m.id)?.description ?? m.description);
  writes.push(searchIndexStatement(db, statusId, { spoilerText: spoiler, text, pollOptions: newPoll?.options, mediaDescriptions: descriptions }));
  // Ordered after the original and every earlier edit: its id is a snowflake of an edited_at later than theirs.
  const editId = snowflake(editedAt);
  writes.push(
    insertStatusEdit(db, {
      id: editId,
      statusId,
      accountId: me.id,
      text,
      content,
      spoilerText: spoiler,
      sensitive,
      mediaIds,
      pollOptions: newPoll?.options ?? null,
      createdAt: editedAt,
    }),
  );
  const updates = notificationWrites(
    db,
    rebloggers.map((r) => ({ recipientId: r, fromAccountId: me.id, type: "update" as const, statusId, activityId: editId })),
  );
  const quoted = quotedUpdateNotifications(db, quoters, me.id, editId);
  writes.push(...updates.stmts, ...quoted.stmts);
  // An edit that lost its race fails its batch (./status-revision.ts), which then records and journals nothing.
  await commit(db, fx, writes, (fx) => {
    fx.add(...notify, ...updates.notify, ...quoted.notify);
    fx.add({ type: "status_updated", statusId });
    fx.federate({ kind: "update_status", statusId });
    if (textChanged && cardUrlOfText(text, cfg)) fx.add({ type: "fetch_card", statusId });
  });
  return { text, textChanged };
}

/** GET /statuses/:id/history: oldest first, always at least one item (the status itself when never edited). */
export async function statusHistory(db: DB, cfg: Config, statusId: string, viewerId: string | null): Promise<MastodonStatusEdit[]> {
  const b = await loadStatusBundle(db, [statusId], viewerId);
  const rendered = renderStatusFrom(cfg, b, statusId);
  const s = b.statuses.get(statusId);
  if (!rendered || !s || s.reblogOfId) throw notFound();
  const [edits, media] = await db.batch([
    db.select().from(statusEdits).where(eq(statusEdits.statusId, statusId)).orderBy(asc(statusEdits.id)),
    db
      .select()
      .from(mediaAttachments)
      .where(
        // media_ids hold unpadded ids: pad them to the column's 20-digit form.
        sql`${mediaAttachments.id} IN (SELECT substr('00000000000000000000' || j.value, -20, 20) FROM status_edits e, json_each(e.media_ids) j WHERE e.status_id = ${padId(statusId)})`,
      ),
  ]);
  if (edits.length === 0) return [renderUneditedVersion(rendered)];
  const byId = new Map(media.map((m) => [m.id, m]));
  const rejectMedia = !!b.accounts.get(s.accountId)?.rejectMedia;
  return edits.map((e) => renderStatusEdit(cfg, e, rendered.account, byId, rejectMedia));
}

/** GET /statuses/:id/source: the author's own raw text (for the edit form). */
export async function statusSource(db: DB, statusId: string, viewerId: string): Promise<MastodonStatusSource> {
  const [s] = await db
    .select({ id: statuses.id, text: statuses.text, spoilerText: statuses.spoilerText })
    .from(statuses)
    .where(and(eq(statuses.id, statusId), eq(statuses.accountId, viewerId), sql`${statuses.reblogOfId} IS NULL`))
    .limit(1);
  if (!s) throw notFound();
  return renderStatusSource(s);
}
