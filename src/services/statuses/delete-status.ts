// Deleting a status (DELETE /api/v1/statuses/:id, or Delete{Note} from its server): everything hanging off it goes
// in one batch, with a tombstone so its URI answers 410 from now on, and it leaves every feed (`removeStatus`, shared
// by both). The REST response is the status as it was, with its source text for "delete & redraft".
//
// Media (the security issue's class 9): the author's REST delete without `delete_media` detaches the attachments and
// stamps `detached_at`, so "delete & redraft" can post the same media_ids within a day (Mastodon's `redraft`); until
// then they are not served (src/api/media/serve.ts), and the cron removes what nobody took back (background/housekeeping).
// Every other removal (delete_media=true, a Delete from the author's server, staff) deletes the rows in the batch and
// the R2 objects right after, through a `delete_media` effect.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { mediaAttachments, statuses, tombstones } from "../../db/schema";
import type { BatchItem } from "drizzle-orm/batch";
import { loadStatusBundle, renderDeletedStatus, renderStatusFrom, type MastodonStatus, type StatusRow } from "../../entities/statuses/status";
import type { Config } from "../../env";
import { notFound } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { FederateAction } from "../../effects/types";
import { conversationsAfterDeleteStatements } from "../interactions/conversations";
import { type DeletedStatusRow, statusStreamInfoStatement, toDeletedStatusInfo } from "../../streaming/publish";
import { type FeedEntryRow, feedEntriesStatement, toFeedRemoval } from "../../timelines/fanout";
import { interactedInboxes } from "../../federation/outbound/recipients";
import { statusNotificationsDeleteStatement } from "../notifications/notifications";

/** Statements removing a status and everything hanging off it, reblogs of it included (those go last). */
export function deleteStatusStatements(db: DB, statusId: string) {
  const p = padId(statusId);
  const reblogs = sql`(SELECT id FROM statuses WHERE reblog_of_id = ${p})`;
  const both = sql`(SELECT ${p} UNION SELECT id FROM statuses WHERE reblog_of_id = ${p})`;
  return [
    statusNotificationsDeleteStatement(db, both),
    db.run(sql`DELETE FROM home_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM mentions WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM status_tags WHERE status_id = ${p}`),
    // Pins and idempotency keys are their author's (by status_pins_pair and the keys' primary key: neither table has an
    // index by status alone).
    db.run(sql`DELETE FROM status_pins WHERE (account_id, status_id) IN (SELECT account_id, id FROM statuses WHERE id IN ${both})`),
    db.run(sql`DELETE FROM bookmarks WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM favourites WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE status_id = ${p})`),
    db.run(sql`DELETE FROM polls WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM status_edits WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM idempotency_keys WHERE account_id = (SELECT account_id FROM statuses WHERE id = ${p}) AND status_id = ${p}`),
    ...conversationsAfterDeleteStatements(db, statusId),
    db.delete(statuses).where(sql`${statuses.id} IN ${reblogs}`).returning({ id: statuses.id, accountId: statuses.accountId }),
    db.delete(statuses).where(eq(statuses.id, statusId)).returning({ id: statuses.id }),
  ] as const;
}

/** Inboxes of interacting servers a delete carries (shared inboxes: one per server, so this is a lot of servers). */
const MAX_REACHED_INBOXES = 500;

/** Feed entries per stream_delete effect (about 60 bytes each). */
const STREAM_DELETE_CHUNK = 1000;

/**
 * Statements for a status's attachments: the ones it has, and the ones its earlier versions had (an edit detaches what
 * it drops, but the edit history still shows them). `keep`: detach them for a redraft; otherwise delete the rows,
 * returning their R2 keys. They must run before `status_edits` goes.
 */
export function statusMediaStatements(db: DB, s: Pick<StatusRow, "id" | "accountId">, keep: boolean, now = Date.now()) {
  const p = padId(s.id);
  // Earlier versions' attachments (media_ids hold unpadded ids), still the author's own and not taken by another post.
  const history = sql`id IN (SELECT substr('00000000000000000000' || j.value, -20, 20) FROM status_edits e, json_each(e.media_ids) j
      WHERE e.status_id = ${p}) AND account_id = ${padId(s.accountId)} AND status_id IS NULL AND scheduled_status_id IS NULL`;
  if (keep) {
    return [
      db.run(sql`UPDATE media_attachments SET detached_at = ${now} WHERE ${history}`),
      db.run(sql`UPDATE media_attachments SET status_id = NULL, detached_at = ${now} WHERE status_id = ${p}`),
    ];
  }
  const keys = { fileKey: mediaAttachments.fileKey, previewKey: mediaAttachments.previewKey };
  return [db.delete(mediaAttachments).where(history).returning(keys), db.delete(mediaAttachments).where(sql`status_id = ${p}`).returning(keys)];
}

type MediaKeys = { fileKey: string | null; previewKey: string | null };

/**
 * Removes a status (and its reblogs) everywhere; false when a parallel request or activity removed it first.
 * `keepMedia`: the author's delete for a redraft (see the top of this file); otherwise its media go with it.
 */
export async function removeStatus(
  db: DB,
  fx: Effects,
  s: Pick<StatusRow, "id" | "uri" | "accountId" | "reblogOfId">,
  extra: BatchItem<"sqlite">[] = [],
  opts: { keepMedia?: boolean; record?: (fx: Effects) => void } = {},
): Promise<boolean> {
  const tomb = s.reblogOfId ? [] : [db.insert(tombstones).values({ uri: s.uri, accountId: s.accountId, createdAt: Date.now() }).onConflictDoNothing()];
  const media = statusMediaStatements(db, s, opts.keepMedia ?? false);
  // Who had it in a feed, and which shared streams showed it, read in the same batch before the rows go.
  const head = [feedEntriesStatement(db, s.id), statusStreamInfoStatement(db, s.id), ...tomb, ...extra];
  // The status's own unfan-out and the caller's effects (its federation) are known before the batch: they are
  // journaled with it, under "the status was still there" (a parallel delete's batch removes nothing and records
  // nothing). The rest depends on what the batch read and returned, so it is recorded after it and travels by the
  // send only (src/effects/commit.ts): the reblogs' unfan-outs, the streams' deletes and the media objects.
  const res = (await commit(
    db,
    fx,
    [...head, ...media, ...deleteStatusStatements(db, s.id)],
    (fx) => {
      fx.add({ type: "unfanout", statusId: s.id, accountId: s.accountId, reblogOfId: s.reblogOfId });
      opts.record?.(fx);
    },
    { when: sql`EXISTS (SELECT 1 FROM statuses WHERE id = ${padId(s.id)})`, applied: (res) => (res[res.length - 1] as unknown[]).length > 0 },
  )) as unknown[];
  // Objects of rows this batch deleted (whoever removed the status): gone from R2 now that the rows are.
  const keys = opts.keepMedia ? [] : (res.slice(head.length, head.length + media.length) as MediaKeys[][]).flat().flatMap((m) => [m.fileKey, m.previewKey]);
  const stored = keys.filter((k): k is string => !!k);
  if (stored.length) fx.add({ type: "delete_media", keys: stored });
  const gone = res[res.length - 1] as { id: string }[];
  if (gone.length === 0) return false;
  const reblogs = res[res.length - 2] as { id: string; accountId: string }[];
  fx.add(...reblogs.map((r) => ({ type: "unfanout" as const, statusId: r.id, accountId: r.accountId, reblogOfId: s.id })));
  const removed = toFeedRemoval(res[0] as FeedEntryRow[]);
  const info = toDeletedStatusInfo(res[1] as DeletedStatusRow[]);
  // Home feeds exist for local accounts only; chunks keep each effect far below a queue message's size.
  for (let i = 0; i === 0 || i < removed.home.length; i += STREAM_DELETE_CHUNK) {
    const lists = i === 0 ? removed.lists : [];
    fx.add({ type: "stream_delete", statusId: s.id, info: i === 0 ? info : null, home: removed.home.slice(i, i + STREAM_DELETE_CHUNK), lists });
  }
  return true;
}

/** DELETE /api/v1/statuses/:id. `deleteMedia`: Mastodon's `delete_media`, the attachments go at once (no redraft). */
export async function deleteStatus(
  db: DB,
  fx: Effects,
  cfg: Config,
  statusId: string,
  viewerId: string,
  opts: { deleteMedia?: boolean } = {},
): Promise<MastodonStatus> {
  // Servers that hold a copy through a boost, a favourite or a reply must hear of the delete: who they are is read now,
  // beside the status, since the rows that say it go with the status.
  const [b, reached] = await Promise.all([loadStatusBundle(db, [statusId], viewerId), interactedInboxes(db, statusId)]);
  const s = b.statuses.get(statusId);
  if (!s || s.accountId !== viewerId) throw notFound();
  const rendered = renderStatusFrom(cfg, b, statusId);
  if (!rendered) throw notFound();
  const orig = s.reblogOfId ? b.statuses.get(s.reblogOfId) : undefined;
  const federation: FederateAction = orig
    ? { kind: "undo_announce", accountId: s.accountId, reblogUri: s.uri, objectUri: orig.uri, objectAuthorId: orig.accountId }
    : {
        kind: "delete_status",
        statusId,
        accountId: s.accountId,
        uri: s.uri,
        visibility: s.visibility,
        mentionUris: (b.mentions.get(statusId) ?? []).map((a) => a.uri),
        reachedInboxes: reached.slice(0, MAX_REACHED_INBOXES),
      };
  const removed = await removeStatus(db, fx, s, [], { keepMedia: !opts.deleteMedia, record: (fx) => fx.federate(federation) });
  if (!removed) throw notFound(); // deleted by a parallel request
  return renderDeletedStatus(rendered, s);
}
