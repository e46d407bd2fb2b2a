// The one switch that runs effects (the JOBS queue consumer): what each effect does, and the effects that follow
// from it. The runner is the one retry owner of effects (./retry.ts): the effects of a message that failed go back,
// alone, with their attempt count and a backoff, and the consumer does not throw them to the queue.
import { createDb, type DB } from "../db/client";
import { readConfig, type Env } from "../env";
import { deliverPush, PushRetry, pushBackoffSeconds, pushJobsOf, pushTargetsStatement, retryPushJob, type PushJob } from "../push";
import { type NotifyEffect, readNotify, STREAM_READ_WHOLE, takeReadAhead } from "../effects/notify-reads";
import { fetchFeaturedCollection } from "../federation/remote/featured-collection";
import { fetchAccountCollections, verifyRemoteCollection } from "../federation/remote/featured-collections";
import { getAccount } from "../queries/accounts/accounts";
import { newResolution } from "../federation/remote/resolve-status";
import { HANDED_OVER, processInboxItem } from "../federation/inbox/inbox-process";
import { notificationRecipientsStatement, recipientRows } from "../queries/notifications/notifications";
import { backfillThread, JOB_BUDGET } from "../federation/remote/backfill";
import { runFederate } from "../federation/outbound/outbound";
import { fanOut, type FanOutResult, unfanOut } from "../timelines/fanout";
import { mergeIntoHome, mergeIntoList, unmergeFromHome } from "../timelines/feed-merge";
import { regenerateHomeFeed } from "../timelines/regenerate";
import { publishScheduledStatus } from "../services/statuses/publish-scheduled";
import { deleteStored } from "../media/store";
import { fetchCardForStatus } from "../services/statuses/preview-cards";
import { processStagedMedia } from "../services/statuses/media-processing";
import { applyDomainBlockRound } from "../services/admin/blocks/domain-blocks";
import { cacheRemoteAttachments, takeCacheRows } from "../services/remote-media/attachments";
import { baseFetchOptions } from "../federation/remote/fetch-options";
import { deleteAccountChunk } from "../services/accounts/delete-account";
import { replaceRemotePins } from "../services/interactions/pins";
import { runArchiveRound } from "../services/data/export-archive";
import { ARCHIVE_DAILY_ROWS, runArchiveImportRound } from "../services/data/import-archive-rounds";
import { runImportRound } from "../services/data/imports";
import { runConfirmationResend, runMail, runPasswordReset } from "../mail/run";
import { mailStaff } from "../mail/staff-notices";
import { runAnnualReportRound } from "../services/accounts/annual-report-rounds";
import {
  type DeletedStatusInfo,
  disconnectStreams,
  publishConversations,
  publishDelete,
  publishNotifications,
  publishRelationsChanged,
  publishStatuses,
  publishStatusUpdate,
  type StatusPublication,
  publishToAccount,
  publishAnnouncementEvent,
} from "../streaming/publish";
import { type AheadParts, publishReadAhead, takePublishAhead, takeUpdateAhead } from "../streaming/read-ahead";
import { Effects, runsAfterResponseHere } from "../effects/collector";
import { retryFailed } from "../effects/retry";
import { claimJournal, doneJournal, FIRST_SEND } from "../effects/journal";
import { sendEffects } from "../effects/send";
import { cacheRemotePictures } from "../services/remote-media/pictures";
import { cacheCardImage } from "../services/remote-media/card-images";
import { cacheRemoteEmojis } from "../services/remote-media/emojis";
import type { Effect, JobMessage } from "../effects/types";

/**
 * What the messages of one JOBS batch share: the stream announcements of their fan-outs, made once for the whole
 * batch after its messages ran (one presence call, one D1 batch of renderings, one publish, however many statuses).
 * A job run without one (tests, a single job) announces each fan-out at once.
 */
export class JobBatch {
  private statuses: StatusPublication[] = [];

  constructor(
    private readonly db: DB,
    private readonly env: Env,
  ) {}

  announce(p: StatusPublication): void {
    this.statuses.push(p);
  }

  /**
   * Publishes what was gathered. Live events are best effort, as Mastodon's (a Redis PUBLISH nobody retries): the feed
   * rows are written, so a failure here is logged and a client that reconnects reads them.
   */
  async flush(): Promise<void> {
    const items = this.statuses.splice(0, this.statuses.length);
    if (!items.length) return;
    try {
      await publishStatuses(this.db, this.env, items);
    } catch (e) {
      console.error("streaming: publishing a batch's statuses failed", e instanceof Error ? e.message : e);
    }
  }
}

/** Effects whose events must not reach a stream before the `update`s gathered earlier in the batch. */
const AFTER_UPDATES = new Set<Effect["type"]>(["stream_delete", "status_updated"]);

/** Runs one effect; what follows from it is recorded on `fx`. */
export async function runEffect(db: DB, env: Env, effect: Effect, fx: Effects, batch?: JobBatch): Promise<void> {
  if (batch && AFTER_UPDATES.has(effect.type)) await batch.flush();
  switch (effect.type) {
    case "fanout": {
      // The first chunk's batch also reads what publishing it renders (publishReadAhead), saving the publish its trip.
      const got: { ahead?: AheadParts } = {};
      const ahead = effect.cursor ? null : publishReadAhead(db, configFor(env, fx), effect.statusId, (a) => (got.ahead = a));
      const delivered = await fanOut(db, fx, effect.statusId, effect.cursor, { ahead });
      return afterFanOut(db, env, fx, effect.statusId, delivered, batch, got.ahead);
    }
    case "fanned_out":
      return afterFanOut(db, env, fx, effect.statusId, effect.delivered, batch, takePublishAhead(fx, effect));
    case "unfanout":
      await unfanOut(db, effect.statusId);
      return;
    case "merge_feed":
      return mergeIntoHome(db, effect.accountId, effect.targetAccountId);
    case "merge_list":
      return mergeIntoList(db, effect.listId, effect.accountId);
    case "unmerge_feed":
      return unmergeFromHome(db, effect.accountId, effect.targetAccountId);
    case "regenerate_feed":
      return regenerateHomeFeed(db, effect.accountId);
    case "notify":
      return notifyAll(db, env, [effect], fx);
    case "push":
      return pushOnce(db, env, effect, fx);
    case "status_updated":
      return publishStatusUpdate(db, env, configFor(env, fx), effect.statusId, takeUpdateAhead(fx, effect));
    case "stream_delete":
      return publishDelete(env, effect.statusId, { home: effect.home, lists: effect.lists }, effect.info as DeletedStatusInfo | null);
    case "relations_changed":
      return publishRelationsChanged(env, effect.accountIds);
    case "inbox":
      return processInboxItem(db, env, effect.itemId, effect.origin, fx, fx.take(effect, HANDED_OVER) ?? null);
    case "federate":
      return runFederate(db, env, effect.origin, effect.action, fx);
    case "fetch_featured": {
      const listed = await fetchFeaturedCollection(db, env, effect.accountId, effect.origin, fx);
      if (listed) await replaceRemotePins(db, effect.accountId, listed);
      const account = await getAccount(db, effect.accountId);
      if (account?.featuredCollectionsUrl) await fetchAccountCollections(newResolution(db, configFor(env, fx), fx), account);
      return;
    }
    case "collection_verify":
      return verifyRemoteCollection(newResolution(db, configFor(env, fx), fx), effect.collectionId);
    case "disconnect_streams":
      return disconnectStreams(env, effect.accountId, effect.tokenId);
    case "announcement":
      return publishAnnouncementEvent(db, env, configFor(env, fx), effect);
    case "filters_changed":
      return publishToAccount(env, effect.accountId, "filters_changed");
    case "publish_scheduled":
      return publishClaimed(db, env, fx, effect.scheduledStatusId);
    case "delete_media":
      return deleteStored(env, effect.keys);
    case "fetch_card": {
      const card = await fetchCardForStatus(db, configFor(env, fx), effect.statusId);
      if (card.cardId && configFor(env, fx).cacheRemoteMedia) await cacheCardImage(db, env, remoteMediaFetch(env, fx), card.cardId);
      return;
    }
    case "cache_media":
      if (!configFor(env, fx).cacheRemoteMedia) return; // turned off since it was queued
      return cacheRemoteAttachments(db, env, remoteMediaFetch(env, fx), effect.mediaIds, takeCacheRows(fx, effect));
    case "cache_pictures":
      if (!configFor(env, fx).cacheRemoteMedia) return; // turned off since it was queued
      return cacheRemotePictures(db, env, remoteMediaFetch(env, fx), effect.accountIds);
    case "cache_emojis":
      if (!configFor(env, fx).cacheRemoteMedia) return; // turned off since it was queued
      return cacheRemoteEmojis(db, env, remoteMediaFetch(env, fx), effect.emojiIds);
    case "process_media":
      await processStagedMedia(db, env, effect.mediaId);
      return;
    case "domain_block_apply":
      return applyDomainBlockRound(db, fx, effect.domainBlockId, effect.domain);
    case "delete_account":
      return deleteAccountChunk(db, fx, effect.accountId);
    // account data import and export
    case "import_rows":
      return runImportRound(db, fx, configFor(env, fx), effect.importId);
    case "export_archive":
      return runArchiveRound(db, env, fx, configFor(env, fx), effect.backupId);
    case "import_archive":
      return runArchiveImportRound(db, env, fx, configFor(env, fx), effect.importId, archiveDailyRows(env));
    case "annual_report":
      return runAnnualReportRound(db, fx, effect.accountId, effect.year);
    case "backfill_thread":
      await backfillThread(db, configFor(env, fx), fx, effect.statusId, JOB_BUDGET);
      return;
    // mail (src/mail/): a failed send throws, so the runner retries it (bounded, src/effects/retry.ts)
    case "mail":
      await runMail(db, env, readConfig(env, effect.origin || fx.origin || "http://localhost/"), effect.mail);
      return;
    case "password_reset":
      await runPasswordReset(db, env, readConfig(env, effect.origin || fx.origin || "http://localhost/"), effect.email);
      return;
    case "confirmation_resend":
      await runConfirmationResend(db, env, readConfig(env, effect.origin || fx.origin || "http://localhost/"), effect.email);
      return;
    case "mail_staff":
      if (env.EMAIL) await mailStaff(db, fx, effect.origin || fx.origin, effect.notice);
      return;
    default:
      return unknownEffect(effect);
  }
}

/** The guarded fetch's options for remote media: the instance's own host refused, and REMOTE_MEDIA_TIMEOUT_MS. */
function remoteMediaFetch(env: Env, fx: Effects) {
  const ms = Number(env.REMOTE_MEDIA_TIMEOUT_MS);
  return { ...baseFetchOptions(configFor(env, fx)), ...(Number.isFinite(ms) && ms > 0 ? { timeoutMs: ms } : {}) };
}

/** The operator's daily D1 row budget for archive imports (ARCHIVE_IMPORT_DAILY_ROWS), else the default. */
function archiveDailyRows(env: Env): number {
  const n = Number(env.ARCHIVE_IMPORT_DAILY_ROWS);
  return Number.isFinite(n) && n > 0 ? n : ARCHIVE_DAILY_ROWS;
}

/** Every effect type has a case above: a new one fails to compile here until it has. At run time: a malformed body. */
function unknownEffect(effect: never): never {
  throw new Error(`unknown effect ${JSON.stringify(effect).slice(0, 200)}`);
}

/**
 * Streams and pushes notifications: each subscription that wants one gets its own push effect (retried on its own).
 * The `notify` effects of one pack run together (runJob), so a fan-out chunk's 500 `status` notifications cost a few
 * queries, not a few per notification.
 */
async function notifyAll(db: DB, env: Env, effects: NotifyEffect[], fx: Effects): Promise<void> {
  if (!effects.length) return;
  const cfg = configFor(env, fx);
  const notificationIds = effects.map((e) => e.notificationId);
  // Who wants a push and who receives them: one round trip for both, or none when the batch that wrote them read them
  // (notify-reads.ts). A few notifications (one incoming activity's) are read whole, as each recipient sees them, so a
  // connected recipient costs one read more, not two; a fan-out chunk's hundreds read only their recipients first (most
  // are not connected).
  if (notificationIds.length <= STREAM_READ_WHOLE) {
    const [targets, ns, senders, reports] = takeReadAhead(fx, effects) ?? (await readNotify(db, notificationIds));
    fx.add(...pushJobsOf(targets));
    return publishNotifications(db, env, cfg, notificationIds, { rows: recipientRows(ns, senders, reports) });
  }
  const [targets, recipients] = await db.batch([pushTargetsStatement(db, notificationIds), notificationRecipientsStatement(db, notificationIds)]);
  fx.add(...pushJobsOf(targets));
  await publishNotifications(db, env, cfg, notificationIds, { recipients });
}

/**
 * After a fan-out chunk: the next chunk, if any, and the announcement of this one to the streams of the feeds it reached
 * (shared streams with the first chunk).
 */
async function afterFanOut(db: DB, env: Env, fx: Effects, statusId: string, delivered: FanOutResult, batch?: JobBatch, ahead?: AheadParts): Promise<void> {
  if (delivered.next) fx.add({ type: "fanout", statusId, cursor: delivered.next });
  const announced: StatusPublication = { statusId, delivered, cfg: configFor(env, fx), ...(ahead ? { ahead } : {}) };
  if (batch) batch.announce(announced);
  else await publishStatuses(db, env, [announced]);
  return publishConversations(db, env, configFor(env, fx), delivered.conversations);
}

/**
 * Publishes a scheduled status the cron claimed. Its claim is its retry owner: a transient failure leaves the row
 * claimed, and the cron takes it again once the claim expires (CLAIM_TTL_MS, at most MAX_CLAIMS times, then the row is
 * failed with its reason; src/services/statuses/scheduled-statuses.ts), so the runner does not retry it too. A permanent
 * failure is recorded on the scheduled status by publishScheduledStatus.
 */
async function publishClaimed(db: DB, env: Env, fx: Effects, scheduledStatusId: string): Promise<void> {
  try {
    await publishScheduledStatus(db, env, fx, scheduledStatusId);
  } catch (e) {
    console.error("scheduled status not published, its claim will expire", scheduledStatusId, e instanceof Error ? e.message : e);
  }
}

/** The configuration effects render with: the origin of the request that caused them (LOCAL_DOMAIN wins when set). */
const configFor = (env: Env, fx: Effects) => readConfig(env, fx.origin || "http://localhost/");

/**
 * Sends one push. src/push owns a push's retries: whatever fails (the push service's answer, the network, a timeout,
 * D1, our own code) comes back as the same effect one attempt later, after its delay, until MAX_PUSH_ATTEMPTS; this
 * never throws, so the runner does not retry it a second way.
 */
async function pushOnce(db: DB, env: Env, job: PushJob, fx: Effects): Promise<void> {
  try {
    await deliverPush(db, env, configFor(env, fx), job);
  } catch (e) {
    const err = e instanceof PushRetry ? e : new PushRetry(pushBackoffSeconds(job.attempt ?? 0), e instanceof Error ? e.message : String(e));
    const next = retryPushJob(job, err);
    if (next) fx.later(next.delaySeconds, next.job);
    else console.warn("push given up", job.subscriptionId, err.message);
  }
}

const originOf = (e: Effect): string => ("origin" in e ? e.origin : "");

/**
 * Runs effects in order, recording what follows from them on `fx`; returns those that failed. A pack's notify effects
 * run as one, where the first of them stands (and fail or succeed together).
 */
async function runEffects(db: DB, env: Env, effects: Effect[], fx: Effects, opts: { batch?: JobBatch } = {}): Promise<Effect[]> {
  const failed: Effect[] = [];
  const notifies = effects.filter((e): e is NotifyEffect => e.type === "notify");
  for (const e of effects) {
    const grouped = e.type === "notify" && notifies.length > 1;
    if (grouped && e !== notifies[0]) continue;
    try {
      await (grouped ? notifyAll(db, env, notifies, fx) : runEffect(db, env, e, fx, opts.batch));
    } catch (err) {
      console.error("effect failed", e.type, err instanceof Error ? err.message : err);
      failed.push(...(grouped ? notifies : [e]));
    }
  }
  return failed;
}

const unpack = (job: JobMessage) => {
  const effects = job.type === "effects" ? [...job.effects, ...(job.extra ?? [])] : [job];
  const origin = (job.type === "effects" ? job.origin : undefined) ?? effects.map(originOf).find(Boolean) ?? "";
  const attempt = job.type === "effects" ? (job.attempt ?? 0) : 0;
  return { effects, origin, attempt };
};

/**
 * Runs one JOBS message (an effect or a pack) and sends what follows from it; the effects that failed go back alone,
 * one attempt later (./retry.ts). Throws only when what follows or what failed could be neither sent nor kept (the
 * queue's own retries then run the message again: its effects change nothing twice).
 * `batch`: the consumer's batch, which announces the fan-outs' statuses once at its end.
 */
export async function runJob(db: DB, env: Env, job: JobMessage, batch?: JobBatch): Promise<void> {
  const { effects, origin, attempt } = unpack(job);
  // Effects kept in the journal since their write (src/effects/commit.ts) run once: this delivery claims their row first
  // and runs nothing of a row another delivery holds or already ran (src/effects/journal.ts).
  const journal = job.type === "effects" ? (job.journal ?? []) : [];
  const token = (job.type === "effects" && job.token) || FIRST_SEND;
  // Another delivery holds the row (or ran it): of this message, only what no row keeps is this delivery's to run.
  const held = journal.length > 0 && !(await claimJournal(env.DB, journal, token));
  const mine = held ? (job.type === "effects" ? (job.extra ?? []) : []) : effects;
  if (!mine.length) return;
  const fx = new Effects(origin);
  const failed = await runEffects(db, env, mine, fx, { batch });
  await sendEffects(env, fx);
  await retryFailed(env, origin, failed, attempt);
  // What failed is the runner's to retry now (./retry.ts); the row's work is done.
  if (!held) await doneJournal(env.DB, journal, token);
}

/**
 * After a request: the effects it recorded to run after its response (Effects.afterResponse) run in this invocation
 * (waitUntil), on the request's collector (what they carry in memory is there), or go to the queue when
 * EFFECTS_AFTER_RESPONSE is "queue" (the integration tests, which run the consumer themselves). An invocation that dies
 * on the way leaves the work where a sweep finds it (the inbox item stays stored until processed:
 * src/background/cron.ts requeueStaleInboxItems).
 */
export async function runAfterResponse(env: Env, ctx: { waitUntil(p: Promise<unknown>): void }, fx: Effects): Promise<void> {
  const effects = fx.drainHere();
  if (!effects.length) return;
  const job: JobMessage = { type: "effects", origin: fx.origin, effects };
  if (!runsAfterResponseHere(env)) {
    const queued = new Effects(fx.origin);
    queued.add(...effects);
    return sendEffects(env, queued);
  }
  ctx.waitUntil(runHere(createDb(env.DB), env, job, fx).catch((e) => console.error("effects after the response failed", e instanceof Error ? e.message : e)));
}

/** Rounds of follow-on effects runHere runs itself before it hands the rest to the queue. */
export const HERE_ROUNDS = 3;

/**
 * Runs a job outside the queue (an inbox POST, after its response) and what follows from it, for up to HERE_ROUNDS
 * rounds: an incoming activity and its fan-out and notifications then cost no queue message, the Workers free plan's
 * scarcest unit (10,000 operations a day, three a message; bench/day.mjs). Whatever is left after the last round,
 * delayed effects, and each effect that failed go to the queue as the consumer would send them, so nothing is lost:
 * a failed effect is retried there, as its second attempt. `fx`: the collector that recorded the job's effects, when
 * they carry something in memory (Effects.carry); it must hold nothing else.
 */
export async function runHere(db: DB, env: Env, job: JobMessage, fx?: Effects): Promise<void> {
  const { effects, origin } = unpack(job);
  let next = effects;
  fx ??= new Effects(origin);
  for (let round = 0; next.length && round < HERE_ROUNDS; round++) {
    await retryFailed(env, origin, await runEffects(db, env, next, fx), 0);
    next = fx.drain();
  }
  fx.add(...next);
  await sendEffects(env, fx);
}

/**
 * The JOBS consumer. A message is acked once it ran: its failed effects were re-sent or dead-lettered by runJob, which
 * owns their retries. Only a message whose failures could not be recorded anywhere goes back through the queue's own
 * retry (max_retries, then the dead-letter queue), as a crash would.
 */
export async function handleJobs(batch: MessageBatch<JobMessage>, env: Env): Promise<void> {
  const db = createDb(env.DB);
  const shared = new JobBatch(db, env);
  for (const m of batch.messages) {
    try {
      await runJob(db, env, m.body, shared);
      m.ack();
    } catch (e) {
      console.error("job could not record its failures", m.body?.type, e instanceof Error ? e.message : e);
      m.retry({ delaySeconds: Math.min(600, 5 * 2 ** Math.min(m.attempts, 7)) });
    }
  }
  await shared.flush();
}
