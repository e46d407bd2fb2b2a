// Publishing a scheduled status (the JOBS effect `publish_scheduled`, recorded by the cron for each row it claimed):
// the same postStatus a direct post goes through, as the owner with the application that scheduled it (the viewer
// is built as src/oauth/viewer.ts builds it from a token), so the post's own effects (fan-out, federation,
// notifications) follow on the collector this is given.
//
// Exactly once: postStatus's write batch deletes the scheduled row and inserts the idempotency key
// `scheduled:<id>` taken from the row under its current claim, so a second run (the queue's retry, an expired claim
// taken again) or a reschedule/delete meanwhile rolls that batch back; a run that finds no claimed row does nothing.
//
// Failures: a transient one (D1, anything that is not a 4xx of the posting rules) throws, so the queue retries the
// effect; a permanent one (postStatus refuses the post now: reply target gone, media gone, text or poll invalid,
// unexpected mentions; or the owner can no longer post) is recorded on the row (failed_at, error) and never retried.
// See src/services/statuses/scheduled-statuses.ts for what the owner then sees.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, oauthApplications, scheduledStatuses, users, type ScheduledStatusRow } from "../../db/schema";
import { Effects } from "../../effects/collector";
import { readConfig, type ConfigEnv } from "../../env";
import { ApiError } from "../../lib/http/errors";
import type { UserViewer } from "../../db/viewer";
import { postStatus, type StatusInput } from "./post-status";
import { failScheduledStatus } from "./scheduled-statuses";

export type PublishOutcome = "published" | "failed" | "skipped";

export const scheduledIdempotencyKey = (id: string) => `scheduled:${id}`;

/** The StatusInput a scheduled status's params stand for (absent values take the owner's defaults at publication). */
export function inputFromParams(row: ScheduledStatusRow): StatusInput {
  const p = row.params;
  return {
    status: p.text,
    spoiler_text: p.spoiler_text ?? undefined,
    sensitive: p.sensitive ?? undefined,
    visibility: p.visibility ?? undefined,
    language: p.language ?? undefined,
    in_reply_to_id: p.in_reply_to_id ?? undefined,
    media_ids: p.media_ids ?? undefined,
    poll: p.poll ?? undefined,
    allowed_mentions: p.allowed_mentions,
    quoted_status_id: p.quoted_status_id ?? undefined,
    // Rows scheduled before quotes were kept say "public", which was the default anyway.
    quote_approval_policy: p.quote_approval_policy ?? undefined,
  };
}

async function stillClaimed(db: DB, id: string, claimedAt: number): Promise<boolean> {
  const [row] = await db
    .select({ claimedAt: scheduledStatuses.claimedAt, failedAt: scheduledStatuses.failedAt })
    .from(scheduledStatuses)
    .where(eq(scheduledStatuses.id, id))
    .limit(1);
  return !!row && row.claimedAt === claimedAt && row.failedAt === null;
}

export async function publishScheduledStatus(db: DB, env: ConfigEnv, fx: Effects, scheduledStatusId: string): Promise<PublishOutcome> {
  const r = await db
    .select({ row: scheduledStatuses, user: users, account: accounts, app: oauthApplications })
    .from(scheduledStatuses)
    .leftJoin(users, eq(users.accountId, scheduledStatuses.accountId))
    .leftJoin(accounts, eq(accounts.id, scheduledStatuses.accountId))
    .leftJoin(oauthApplications, eq(oauthApplications.id, scheduledStatuses.applicationId))
    .where(eq(scheduledStatuses.id, scheduledStatusId))
    .get();
  // Gone (published, deleted), failed, or not claimed (rescheduled since the cron took it): nothing to do.
  if (!r || r.row.failedAt !== null || r.row.claimedAt === null) return "skipped";
  const row = r.row;
  const claimedAt = row.claimedAt as number;

  if (!r.user || !r.account || r.user.disabled || r.account.suspendedAt || !r.user.approved) {
    await failScheduledStatus(db, row.id, claimedAt, "Your login is currently disabled");
    return "failed";
  }
  const viewer: UserViewer = {
    tokenId: "",
    scopes: new Set(["write:statuses"]),
    applicationId: r.app ? r.app.id : null,
    application: r.app ? { name: r.app.name, website: r.app.website } : null,
    user: r.user,
    account: r.account,
    role: null,
    feedDroppedAt: null,
    followRequestsCount: 0,
  };
  // The post's URLs are those of the server the owner scheduled it on (LOCAL_DOMAIN, when set, wins in readConfig).
  const cfg = readConfig(env, row.origin || fx.origin || "http://localhost/");
  const own = new Effects(cfg.origin);
  try {
    const res = await postStatus(db, own, cfg, viewer, inputFromParams(row), scheduledIdempotencyKey(row.id), { scheduled: { id: row.id, claimedAt } });
    if (res.created) fx.adopt(own);
    // created=false: the key named an existing status. A publication that committed deleted the row with it; if the
    // row is still here, the key was taken by something else and this one would never post: say so on the row.
    if (!res.created && (await stillClaimed(db, row.id, claimedAt))) {
      await failScheduledStatus(db, row.id, claimedAt, "A status with the same idempotency key already exists");
      return "failed";
    }
    return res.created ? "published" : "skipped";
  } catch (err) {
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
      // postStatus's only 404 here is the reply target (gone, or no longer visible to the owner).
      const reason = err.status === 404 && row.params.in_reply_to_id ? "The post you are trying to reply to does not appear to exist." : err.message;
      await failScheduledStatus(db, row.id, claimedAt, reason);
      return "failed";
    }
    // The write batch's guard fails when the row was deleted, rescheduled or published meanwhile: nothing is lost.
    if (!(await stillClaimed(db, row.id, claimedAt))) return "skipped";
    throw err;
  }
}
