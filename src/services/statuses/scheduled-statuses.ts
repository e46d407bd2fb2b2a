// Scheduled statuses (Mastodon's ScheduledStatus and Api::V1::ScheduledStatusesController): creating one from
// POST /api/v1/statuses with scheduled_at (called by postStatus once the post has passed every check a direct post
// passes), listing, showing, rescheduling and deleting the owner's own, and the cron's claim on those that are due.
// Publishing is src/services/statuses/publish-scheduled.ts (through postStatus).
//
// Rules, as Mastodon's: scheduled_at at least 5 minutes ahead; at most 300 pending per account (TOTAL_LIMIT) and 25
// on one UTC day of publication (DAILY_LIMIT); media attached are reserved for the scheduled status
// (media_attachments.scheduled_status_id) until it is published (they move to the status) or deleted (freed).
//
// Failures: a publication that can never succeed (the reply target is gone, a media file was deleted, the text no
// longer passes, the account can no longer post) does not drop the scheduled status as Mastodon does: it stays in
// GET /api/v1/scheduled_statuses with its past scheduled_at, the reason kept in `error`, and the cron leaves it
// alone. The owner sees it still pending, and either deletes it (freeing its media) or reschedules it with PUT
// (which clears the failure and tries again at the new time).
import { and, eq, sql, type SQL } from "drizzle-orm";
import { type DB, idList, runBatch, type Statement } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { mediaAttachments, scheduledStatuses, type ScheduledParams, type ScheduledStatusRow } from "../../db/schema";
import { renderScheduledStatus, type ScheduledStatusJson } from "../../entities/statuses/scheduled-status";
import type { MediaRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake, unpadId } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";

export const TOTAL_LIMIT = 300;
export const DAILY_LIMIT = 25;
export const MIN_SCHEDULE_OFFSET_MS = 5 * 60_000;
/** A claim older than this belongs to a publication that died: a later cron run takes the row again. */
export const CLAIM_TTL_MS = 5 * 60_000;
/** Claims after which a row that never got published is failed ("retried no more"). */
export const MAX_CLAIMS = 12;
/** Rows claimed per cron run (one effect each); the rest wait a minute. */
export const DUE_PER_RUN = 100;
const IDEMPOTENCY_TTL_MS = 3600_000;
const DAY_MS = 86_400_000;

export const REPEATED_FAILURE = "Publishing failed repeatedly";

const totalLimitMessage = `You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`;
const dailyLimitMessage = `You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`;

/** Mastodon's messages: an unparsable date, then the 5-minute rule (scheduled_statuses.too_soon). */
export function parseScheduledAt(raw: string, now: number): number {
  const t = /^\d{4}-\d{2}-\d{2}/.test(raw.trim()) ? Date.parse(raw.trim()) : NaN;
  if (Number.isNaN(t)) throw validationFailed("Scheduled at Invalid date supplied");
  if (t <= now + MIN_SCHEDULE_OFFSET_MS) throw validationFailed("Scheduled at The scheduled date must be in the future");
  return t;
}

const dayOf = (at: number) => at - (((at % DAY_MS) + DAY_MS) % DAY_MS);

/** The media ids a scheduled status holds, padded for comparison with media_attachments.id (one index lookup each). */
const reservedMediaIds = (scheduled: SQL) =>
  sql`SELECT substr('00000000000000000000' || j.value, -20) FROM ${scheduledStatuses} s, json_each(s.params, '$.media_ids') j WHERE s.id IN (${scheduled})`;

function mediaOf(db: DB, scheduled: SQL) {
  return db
    .select()
    .from(mediaAttachments)
    .where(sql`${mediaAttachments.id} IN (${reservedMediaIds(scheduled)}) AND ${mediaAttachments.scheduledStatusId} IS NOT NULL`);
}

// ---- creating (from postStatus) ----

/** What postStatus has validated; `media` are the poster's finished, unattached files in the order given. */
export interface ScheduleInput {
  scheduledAt: number;
  params: ScheduledParams;
  media: MediaRow[];
  applicationId: string | null;
  origin: string;
  idempotencyKey: string | null;
}

/**
 * One batch: the idempotency lookup, the two counts, the insert (conditional on the limits, so parallel requests
 * cannot pass them together) and the media reservation (conditional on the insert).
 */
export async function scheduleStatus(db: DB, cfg: Config, accountId: string, input: ScheduleInput, now = Date.now()) {
  const id = snowflake(now);
  const owner = padId(accountId);
  const day = dayOf(input.scheduledAt);
  const key = input.idempotencyKey;
  const repeat = key
    ? sql`SELECT id FROM scheduled_statuses WHERE account_id = ${owner} AND idempotency_key = ${key} AND created_at > ${now - IDEMPOTENCY_TTL_MS}`
    : sql`SELECT NULL WHERE 0`;
  const mediaIds = input.media.map((m) => m.id);
  const stmts: Statement[] = [
    db.all<{ id: string }>(sql`${repeat} LIMIT 1`),
    db.all<{ total: number; day: number }>(sql`SELECT count(*) AS total,
        coalesce(sum(scheduled_at >= ${day} AND scheduled_at < ${day + DAY_MS}), 0) AS day
      FROM scheduled_statuses WHERE account_id = ${owner}`),
    db.run(sql`INSERT INTO scheduled_statuses (id, account_id, application_id, scheduled_at, params, origin, idempotency_key, claims, created_at)
      SELECT ${padId(id)}, ${owner}, ${input.applicationId ? padId(input.applicationId) : null}, ${input.scheduledAt}, ${JSON.stringify(input.params)},
        ${input.origin}, ${key}, 0, ${now}
      WHERE NOT EXISTS (${repeat})
        AND (SELECT count(*) FROM scheduled_statuses WHERE account_id = ${owner}) < ${TOTAL_LIMIT}
        AND (SELECT count(*) FROM scheduled_statuses WHERE account_id = ${owner} AND scheduled_at >= ${day} AND scheduled_at < ${day + DAY_MS}) < ${DAILY_LIMIT}`),
    ...(mediaIds.length
      ? [
          db.run(sql`UPDATE media_attachments SET scheduled_status_id = ${padId(id)}
            WHERE id IN ${idList(mediaIds)} AND account_id = ${owner} AND status_id IS NULL AND scheduled_status_id IS NULL
              AND EXISTS (SELECT 1 FROM scheduled_statuses WHERE id = ${padId(id)})`),
        ]
      : []),
  ];
  const [repeated, counts, inserted] = (await runBatch(db, stmts)) as [{ id: string }[], { total: number; day: number }[], D1Result];
  if (repeated[0]) {
    const previous = unpadId(repeated[0].id);
    return { id: previous, created: false, entity: await showScheduledStatus(db, cfg, accountId, previous) };
  }
  if (!inserted.meta?.changes) {
    const c = counts[0] ?? { total: 0, day: 0 };
    const errors: string[] = [];
    if (Number(c.total) >= TOTAL_LIMIT) errors.push(totalLimitMessage);
    if (Number(c.day) >= DAILY_LIMIT) errors.push(dailyLimitMessage);
    // Neither: a parallel request took the last place (or the same idempotency key) between the count and the insert.
    throw validationFailed(errors.length ? errors.join(", ") : totalLimitMessage);
  }
  const row: ScheduledStatusRow = {
    id,
    accountId,
    applicationId: input.applicationId,
    scheduledAt: input.scheduledAt,
    params: input.params,
    origin: input.origin,
    idempotencyKey: key,
    claimedAt: null,
    claims: 0,
    failedAt: null,
    error: null,
    createdAt: now,
  };
  return {
    id,
    created: true,
    entity: renderScheduledStatus(
      cfg,
      row,
      input.media.map((m) => ({ ...m, scheduledStatusId: id })),
    ),
  };
}

// ---- the owner's API ----

const owned = (accountId: string, id: string) => and(eq(scheduledStatuses.id, id), eq(scheduledStatuses.accountId, accountId));

/** The owner's scheduled statuses, newest id first, with their media: one batch. */
export async function listScheduledStatuses(db: DB, cfg: Config, accountId: string, page: Page): Promise<ScheduledStatusJson[]> {
  const where = and(eq(scheduledStatuses.accountId, accountId), cursorWhere(scheduledStatuses.id, page));
  const pageIds = db
    .select({ id: scheduledStatuses.id })
    .from(scheduledStatuses)
    .where(where)
    .orderBy(cursorOrder(scheduledStatuses.id, page))
    .limit(page.limit);
  const [rows, media] = await db.batch([
    db.select().from(scheduledStatuses).where(where).orderBy(cursorOrder(scheduledStatuses.id, page)).limit(page.limit),
    mediaOf(db, pageIds.getSQL()),
  ]);
  return inPageOrder(rows, page).map((r) => renderScheduledStatus(cfg, r, media));
}

export async function showScheduledStatus(db: DB, cfg: Config, accountId: string, id: string): Promise<ScheduledStatusJson> {
  const [rows, media] = await db.batch([
    db.select().from(scheduledStatuses).where(owned(accountId, id)).limit(1),
    mediaOf(db, sql`SELECT id FROM scheduled_statuses WHERE id = ${padId(id)} AND account_id = ${padId(accountId)}`),
  ]);
  if (!rows[0]) throw notFound();
  return renderScheduledStatus(cfg, rows[0], media);
}

/**
 * PUT /api/v1/scheduled_statuses/:id: a new time (same rules as creating; the daily limit counts the others on the
 * new day). It also re-arms a failed one and drops a claim in progress, so a publication already under way for the
 * old time does not happen (publish-scheduled.ts checks the claim in its write batch).
 */
export async function rescheduleStatus(db: DB, cfg: Config, accountId: string, id: string, rawScheduledAt: string | undefined, now = Date.now()) {
  if (rawScheduledAt === undefined || rawScheduledAt === "") return showScheduledStatus(db, cfg, accountId, id);
  const at = parseScheduledAt(rawScheduledAt, now);
  const day = dayOf(at);
  const owner = padId(accountId);
  const pid = padId(id);
  const [updated, rows, media] = await db.batch([
    db.run(sql`UPDATE scheduled_statuses SET scheduled_at = ${at}, claimed_at = NULL, claims = 0, failed_at = NULL, error = NULL
      WHERE id = ${pid} AND account_id = ${owner}
        AND (SELECT count(*) FROM scheduled_statuses WHERE account_id = ${owner} AND id != ${pid}
             AND scheduled_at >= ${day} AND scheduled_at < ${day + DAY_MS}) < ${DAILY_LIMIT}`),
    db.select().from(scheduledStatuses).where(owned(accountId, id)).limit(1),
    mediaOf(db, sql`SELECT id FROM scheduled_statuses WHERE id = ${pid} AND account_id = ${owner}`),
  ]);
  if (!rows[0]) throw notFound();
  if (!(updated as D1Result).meta?.changes) throw validationFailed(dailyLimitMessage);
  return renderScheduledStatus(cfg, rows[0], media);
}

/** DELETE: the row goes and its media are free again (attachable to another post, deletable). */
export async function deleteScheduledStatus(db: DB, accountId: string, id: string): Promise<void> {
  const pid = padId(id);
  const mine = sql`SELECT id FROM scheduled_statuses WHERE id = ${pid} AND account_id = ${padId(accountId)}`;
  const [, del] = await db.batch([
    db.run(sql`UPDATE media_attachments SET scheduled_status_id = NULL
      WHERE id IN (${reservedMediaIds(mine)}) AND scheduled_status_id = ${pid}`),
    db.run(sql`DELETE FROM scheduled_statuses WHERE id = ${pid} AND account_id = ${padId(accountId)}`),
  ]);
  if (!(del as D1Result).meta?.changes) throw notFound();
}

// ---- the cron's side ----

/**
 * Claims the rows due at `at` (one UPDATE … RETURNING: SQLite runs it as one write, so two overlapping cron runs
 * cannot take the same row) and returns their ids. A claim older than CLAIM_TTL_MS (its publication died) is taken
 * again; a row claimed MAX_CLAIMS times without being published is failed instead, with its reason kept.
 */
export async function claimDueScheduledStatuses(db: DB, at: number, limit = DUE_PER_RUN): Promise<string[]> {
  const expired = at - CLAIM_TTL_MS;
  const due = sql`scheduled_at <= ${at} AND failed_at IS NULL AND (claimed_at IS NULL OR claimed_at <= ${expired})`;
  const [, claimed] = await db.batch([
    db.run(sql`UPDATE scheduled_statuses SET failed_at = ${at}, error = ${REPEATED_FAILURE}, claimed_at = NULL
      WHERE scheduled_at <= ${at} AND failed_at IS NULL AND claimed_at IS NOT NULL AND claimed_at <= ${expired} AND claims >= ${MAX_CLAIMS}`),
    db.all<{ id: string }>(sql`UPDATE scheduled_statuses SET claimed_at = ${at}, claims = claims + 1
      WHERE id IN (SELECT id FROM scheduled_statuses WHERE ${due} ORDER BY scheduled_at LIMIT ${limit}) AND ${due}
      RETURNING id`),
  ]);
  return (claimed as { id: string }[]).map((r) => unpadId(r.id));
}

/** Records a permanent failure, if the row is still under the same claim (a reschedule or delete meanwhile wins). */
export async function failScheduledStatus(db: DB, id: string, claimedAt: number, error: string, now = Date.now()): Promise<void> {
  await db.run(sql`UPDATE scheduled_statuses SET failed_at = ${now}, error = ${error.slice(0, 1000)}, claimed_at = NULL
    WHERE id = ${padId(id)} AND claimed_at = ${claimedAt} AND failed_at IS NULL`);
}
