// Scheduled statuses (Mastodon's ScheduledStatus): the parameters of a post to be published later, by the cron, through
// the same posting service (src/services/statuses/publish-scheduled.ts). Media attached to one are reserved for it through
// media_attachments.scheduled_status_id. Hand-written migration: migrations/0005_scheduled_statuses.sql.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, json, ms } from "../types";

/** The `params` of the Mastodon entity, as stored and rendered (ids as strings; application_id is not rendered). */
export interface ScheduledParams {
  text: string;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: "public" | "unlisted" | "private" | "direct" | null;
  language: string | null;
  scheduled_at: null;
  poll: { options: string[]; expires_in: number; multiple: boolean; hide_totals: boolean } | null;
  idempotency: null;
  with_rate_limit: false;
  in_reply_to_id: string | null;
  /** The status quoted (Mastodon 4.5), checked when scheduled and again when published. */
  quoted_status_id: string | null;
  quote_approval_policy: "public" | "followers" | "nobody";
  /** Only when the client sent allowed_mentions; the check is repeated at publication. */
  allowed_mentions?: string[];
}

export const scheduledStatuses = lazyTable(() =>
  sqliteTable(
    "scheduled_statuses",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      /** The application of the token that scheduled it: the published status shows it, as a direct post would. */
      applicationId: id("application_id"),
      scheduledAt: ms("scheduled_at").notNull(),
      params: json<ScheduledParams>()("params").notNull(),
      /** scheme://host of the request that scheduled it: the published status's URLs when LOCAL_DOMAIN is unset. */
      origin: text("origin").notNull().default(""),
      /** The Idempotency-Key of the scheduling request (a repeat within an hour returns this row). */
      idempotencyKey: text("idempotency_key"),
      /** Set by the cron when it takes the row for publication; a claim older than CLAIM_TTL_MS is taken again. */
      claimedAt: ms("claimed_at"),
      /** How many times the cron has claimed it; after MAX_CLAIMS the row is failed. */
      claims: integer("claims").notNull().default(0),
      /** A publication that failed for good (the post is invalid now): kept, with the reason, and not retried. */
      failedAt: ms("failed_at"),
      error: text("error"),
      createdAt: ms("created_at").notNull(),
    },
    (t) => [index("scheduled_statuses_due").on(t.scheduledAt), index("scheduled_statuses_account").on(t.accountId, t.id)],
  ),
);

export type ScheduledStatusRow = typeof scheduledStatuses.$inferSelect;
