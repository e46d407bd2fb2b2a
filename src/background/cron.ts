// Cron (every minute, wrangler.toml): publish the scheduled statuses that are due (claimed here, one
// `publish_scheduled` effect each, published by the JOBS consumer: src/services/statuses/publish-scheduled.ts), and send again
// the effects a failed queue send left in D1 (src/effects/pending.ts). On every 5th
// minute also: drop the home feeds of users inactive for 14 days (Mastodon's FeedCleanupScheduler; the feed is rebuilt
// when they come back), expire temporary mutes, send "poll" notifications for polls that ended, and prune rows that
// only matter for a while (housekeeping.ts, expired codes and sessions), delete media nothing holds after a day,
// score trends (src/trends/refresh.ts, Mastodon's 5-minute RefreshScheduler). Once an hour (minute 2): drop preview
// cards nothing links and sweep the archive imports left behind (an upload never completed, a failed import's files after
// 30 days), and every 2 hours tell staff of trends awaiting review. Each task is bounded per run and
// independent: one failing does not stop the others. Rows read per task: test/integration/cron-rows.test.ts.
import { sql } from "drizzle-orm";
import { createDb, idList, type DB, runBatch, type Statement } from "../db/client";
import { settingStatement } from "../db/setting-statement";
import { Effects } from "../effects/collector";
import { resendPending } from "../effects/pending";
import { sendEffects } from "../effects/send";
import { runAfterResponse } from "./effects-runner";
import type { NotifyEffect } from "../effects/types";
import { readConfig, type Env } from "../env";
import { padId, snowflake, unpadId } from "../lib/text/ids";
import { notificationWrite } from "../services/notifications/notifications";
import { pruneOrphanCards } from "../services/statuses/preview-cards";
import { claimDueScheduledStatuses } from "../services/statuses/scheduled-statuses";
import { refreshTrends } from "../trends/refresh";
import { isTrendsNoticeHour, noticeTrendsAwaitingReview } from "../trends/review-notice";
import { purgeExpiredLinks } from "../services/auth/email-links";
import { purgeExpiredGrants, purgeExpiredWebSessions } from "./expired-logins";
import { cleanupUnattachedMedia, pruneFederationState } from "./housekeeping";
import { pruneRemoteMedia } from "../services/remote-media/prune";
import { pruneRemotePictures, queueDuePictures } from "../services/remote-media/pictures";
import { queueDueEmojis } from "../services/remote-media/emojis";
import { sweepArchiveImports } from "../services/data/import-archive-sweep";

export const INACTIVE_AFTER_MS = 14 * 24 * 60 * 60 * 1000;
const DROP_PER_RUN = 200;
const POLLS_PER_RUN = 100;
const POLL_WATERMARK_KEY = "cron.polls_notified_until";
export const STALE_INBOX_AFTER_MS = 10 * 60 * 1000;
const STALE_INBOX_UNTIL_MS = 20 * 60 * 1000;
const STALE_INBOX_PER_RUN = 500;

/**
 * The Worker's cron trigger (every minute): the heavier tasks run on every 5th minute only, as they did before; the
 * hourly ones on minute 2 of the hour, which the 5th-minute runs do not use.
 */
export function runCronTrigger(env: Env, scheduledTime: number): Promise<void> {
  return runScheduled(env, scheduledTime, { housekeeping: isFifthMinute(scheduledTime), hourly: isHourlyMinute(scheduledTime) });
}

export const isFifthMinute = (at: number) => new Date(at).getUTCMinutes() % 5 === 0;
export const HOURLY_MINUTE = 2;
export const isHourlyMinute = (at: number) => new Date(at).getUTCMinutes() === HOURLY_MINUTE;

/**
 * One cron run at `at`: due scheduled statuses always; the 5th-minute tasks unless `housekeeping` is false; the hourly
 * ones when `hourly` is true (by default when `housekeeping` is: a direct call runs everything).
 */
export async function runScheduled(env: Env, at: number, opts: { housekeeping?: boolean; hourly?: boolean } = {}): Promise<void> {
  const db = createDb(env.DB);
  // The cron has no request: its origin is the configured domain (LOCAL_DOMAIN), which federated effects need.
  const fx = new Effects(readConfig(env, "http://localhost/").origin);
  const tasks: (readonly [string, () => Promise<unknown>])[] = [
    ["publish scheduled statuses", () => claimScheduled(db, fx, at)],
    ["send effects the queue refused", () => resendPending(env, at)],
  ];
  const housekeeping = opts.housekeeping ?? true;
  if (housekeeping) tasks.push(...housekeepingTasks(env, db, fx, at));
  if (opts.hourly ?? housekeeping) tasks.push(...hourlyTasks(env, db, at, fx));
  for (const [name, task] of tasks) {
    try {
      await task();
    } catch (e) {
      console.error(`cron: ${name} failed`, e instanceof Error ? e.message : e);
    }
  }
  await sendEffects(env, fx);
  // What a task recorded to run in this invocation (the trends notice's staff mail: one binding call) runs now, as an
  // inbox POST's work does after its response: no queue message unless it fails, when the queue retries it.
  const waits: Promise<unknown>[] = [];
  await runAfterResponse(env, { waitUntil: (p) => waits.push(p) }, fx);
  await Promise.all(waits);
}

/**
 * Claims the scheduled statuses due at `at` and records one publish effect per row. If the effects never leave
 * (this run dies before sendEffects), the claims expire and a later run takes the rows again.
 */
export async function claimScheduled(db: DB, fx: Effects, at: number): Promise<number> {
  const ids = await claimDueScheduledStatuses(db, at);
  for (const scheduledStatusId of ids) fx.add({ type: "publish_scheduled", scheduledStatusId });
  return ids.length;
}

/** The 5th-minute tasks, in order (exported so test/integration/cron-rows.test.ts can count each one's rows). */
export function housekeepingTasks(env: Env, db: DB, fx: Effects, at: number) {
  return [
    ["drop inactive feeds", () => dropInactiveFeeds(db, at)],
    ["expire mutes", () => expireMutes(db, at)],
    ["poll notifications", () => notifyEndedPolls(db, fx, at)],
    ["prune federation state and idempotency keys", () => pruneFederationState(db, at)],
    ["purge expired authorization codes", () => purgeExpiredGrants(db, at)],
    ["purge expired web sessions", () => purgeExpiredWebSessions(db, at)],
    ["purge expired e-mail links", () => purgeExpiredLinks(db, at)],
    ["clean up unattached media", () => cleanupUnattachedMedia(db, env, fx, at)],
    ["prune cached remote media", () => pruneRemoteMedia(db, env, fx, at)],
    ["queue remote avatars and headers", async () => (readConfig(env, "http://localhost/").cacheRemoteMedia ? queueDuePictures(db, fx, at) : 0)],
    ["queue remote custom emojis", async () => (readConfig(env, "http://localhost/").cacheRemoteMedia ? queueDueEmojis(db, fx, at) : 0)],
    ["prune cached remote avatars and headers", () => pruneRemotePictures(db, env, fx, at)],
    ["requeue stale inbox items", () => requeueStaleInboxItems(db, fx, at)],
    ["refresh trends", () => refreshTrends(db, at)],
  ] as const;
}

/**
 * The hourly tasks (minute 2): pruning preview cards nothing links walks the cards a page at a time (pruneOrphanCards),
 * which costs rows in proportion to the page, not to what changed, so it runs 24 times a day rather than 288.
 */
export function hourlyTasks(env: Pick<Env, "MEDIA">, db: DB, at: number, fx: Effects) {
  const tasks: (readonly [string, () => Promise<unknown>])[] = [
    ["prune unused preview cards", () => pruneOrphanCards(db, env, at)],
    ["sweep archive imports left behind", () => sweepArchiveImports(db, env, at)],
  ];
  // Every 2 hours: trends awaiting review, to staff (src/trends/review-notice.ts).
  if (isTrendsNoticeHour(at)) tasks.push(["notice of trends awaiting review", () => noticeTrendsAwaitingReview(db, fx)]);
  return tasks;
}

/**
 * An incoming activity is processed after its POST was answered, in that invocation (Effects.afterResponse). One whose
 * invocation died first is still stored: items 10 to 20 minutes old go to the queue (each is seen by two runs of this
 * 5-minute task, so one missed run loses nothing; a second processing finds the item gone or changes nothing). An item
 * whose processing failed is the runner's to retry, not this sweep's: the failure moved its received_at out of this
 * window (src/federation/inbox/inbox-process.ts markRetried), so the two do not multiply its attempts.
 */
export async function requeueStaleInboxItems(db: DB, fx: Effects, at: number): Promise<number> {
  const rows = await db.all<{ id: string }>(sql`SELECT id FROM inbox_items
    WHERE received_at >= ${at - STALE_INBOX_UNTIL_MS} AND received_at < ${at - STALE_INBOX_AFTER_MS} ORDER BY received_at LIMIT ${STALE_INBOX_PER_RUN}`);
  for (const r of rows) fx.add({ type: "inbox", itemId: unpadId(r.id), origin: fx.origin });
  return rows.length;
}

/** Marks feeds of inactive users dropped and deletes their rows; returns the accounts dropped. */
export async function dropInactiveFeeds(db: DB, at: number): Promise<string[]> {
  // users is small (local users only), so this reads it whole; feeds already dropped are skipped.
  const rows = await db.all<{ id: string }>(sql`SELECT u.account_id AS id FROM users u
    WHERE coalesce(u.last_active_at, u.current_sign_in_at, u.created_at) < ${at - INACTIVE_AFTER_MS}
      AND NOT EXISTS (SELECT 1 FROM feed_states fs WHERE fs.account_id = u.account_id AND fs.dropped_at IS NOT NULL)
    LIMIT ${DROP_PER_RUN}`);
  const ids = rows.map((r) => unpadId(r.id));
  if (!ids.length) return [];
  await db.batch([
    db.run(sql`INSERT INTO feed_states (account_id, dropped_at) SELECT value, ${at} FROM ${idList(ids)} AS dropped WHERE true
      ON CONFLICT(account_id) DO UPDATE SET dropped_at = excluded.dropped_at`),
    db.run(sql`DELETE FROM home_feed WHERE account_id IN ${idList(ids)}`),
  ]);
  return ids;
}

export async function expireMutes(db: DB, at: number): Promise<void> {
  await db.run(sql`DELETE FROM mutes WHERE expires_at IS NOT NULL AND expires_at <= ${at}`);
}

/**
 * Polls that ended since the last run notify their local voters and their local author (Mastodon's
 * PollExpirationNotifyWorker). A watermark in instance_settings says how far this got; notifications are unique per
 * (recipient, type, poll), so a poll seen twice notifies once.
 */
export async function notifyEndedPolls(db: DB, fx: Effects, at: number): Promise<number> {
  const [mark] = await db.all<{ value: string }>(sql`SELECT value FROM instance_settings WHERE key = ${POLL_WATERMARK_KEY}`);
  const since = mark ? Number(mark.value) : at - 60 * 60 * 1000;
  const ended = sql`SELECT id FROM polls WHERE expires_at >= ${since} AND expires_at <= ${at} AND status_id IS NOT NULL
    ORDER BY expires_at LIMIT ${POLLS_PER_RUN}`;
  const [polls, voters] = await db.batch([
    db.all<{ id: string; status_id: string; account_id: string; expires_at: number; local: number | null }>(
      sql`SELECT p.id, p.status_id, p.account_id, p.expires_at, (SELECT s.local FROM statuses s WHERE s.id = p.status_id) AS local
        FROM polls p WHERE p.id IN (${ended}) ORDER BY p.expires_at`,
    ),
    db.all<{ poll_id: string; account_id: string }>(sql`SELECT DISTINCT v.poll_id, v.account_id FROM poll_votes v WHERE v.poll_id IN (${ended})`),
  ]);
  const byId = new Map(polls.map((p) => [p.id, p]));
  // Each notification's statement with its `notify` effect, recorded once the statement's batch committed.
  const writes: { statement: Statement; effect?: NotifyEffect }[] = [];
  for (const v of voters) {
    const p = byId.get(v.poll_id);
    if (!p || v.account_id === p.account_id) continue;
    writes.push(
      notificationWrite(db, {
        recipientId: unpadId(v.account_id),
        fromAccountId: unpadId(p.account_id),
        type: "poll",
        statusId: unpadId(p.status_id),
        activityId: unpadId(p.id),
      }),
    );
  }
  // The author hears about their own poll too; notificationWrite skips self-notifications, so this is direct.
  for (const p of polls) {
    const id = snowflake(at);
    writes.push({
      statement: db.run(sql`INSERT OR IGNORE INTO notifications (id, account_id, from_account_id, type, status_id, activity_id, created_at)
        SELECT ${padId(id)}, ${p.account_id}, ${p.account_id}, 'poll', ${p.status_id}, ${p.id}, ${at}
        WHERE EXISTS (SELECT 1 FROM users WHERE users.account_id = ${p.account_id})`),
      effect: { type: "notify", notificationId: id },
    });
  }
  let next = at;
  const lastPoll = polls[polls.length - 1];
  if (polls.length >= POLLS_PER_RUN && lastPoll) {
    const last = lastPoll.expires_at;
    next = last > since ? last : since + 1;
  }
  writes.push({ statement: settingStatement(db, POLL_WATERMARK_KEY, String(next)) });
  for (let i = 0; i < writes.length; i += 100) {
    const chunk = writes.slice(i, i + 100);
    await runBatch(
      db,
      chunk.map((w) => w.statement),
    );
    fx.add(...chunk.flatMap((w) => (w.effect ? [w.effect] : [])));
  }
  // A local poll's end goes to the servers of its remote voters and of the author's followers (the closed Question).
  for (const p of polls) if (p.local) fx.federate({ kind: "update_poll", statusId: unpadId(p.status_id), final: true });
  return polls.length;
}
