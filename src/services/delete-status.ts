// Deleting a status (DELETE /api/v1/statuses/:id): the response is the status as it was, with its source text for
// "delete & redraft"; everything hanging off it goes in one batch. Media is detached, not deleted, so a redraft can
// reuse the same media_ids.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statuses, tombstones } from "../db/schema";
import { loadStatusBundle, renderStatusFrom } from "../entities/status";
import type { Config } from "../env";
import { notFound } from "../lib/errors";
import { padId } from "../lib/ids";
import type { JobMessage } from "./jobs";
import { federateJob } from "../federation/enqueue";

export interface DeleteResult {
  status: Record<string, unknown>;
  jobs: JobMessage[];
}

/** Statements removing a status and everything hanging off it, reblogs of it included (those go last). */
export function deleteStatusStatements(db: DB, statusId: string) {
  const p = padId(statusId);
  const reblogs = sql`(SELECT id FROM statuses WHERE reblog_of_id = ${p})`;
  const both = sql`(SELECT ${p} UNION SELECT id FROM statuses WHERE reblog_of_id = ${p})`;
  return [
    db.run(sql`DELETE FROM notifications WHERE status_id IN ${both} OR (type = 'reblog' AND activity_id IN ${both})`),
    db.run(sql`DELETE FROM home_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM mentions WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM status_tags WHERE status_id = ${p}`),
    db.run(sql`UPDATE media_attachments SET status_id = NULL WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM status_pins WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM bookmarks WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM favourites WHERE status_id IN ${both}`),
    db.run(sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE status_id = ${p})`),
    db.run(sql`DELETE FROM polls WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM status_edits WHERE status_id = ${p}`),
    db.run(sql`DELETE FROM idempotency_keys WHERE status_id = ${p}`),
    db.delete(statuses).where(sql`${statuses.id} IN ${reblogs}`).returning({ id: statuses.id, accountId: statuses.accountId }),
    db.delete(statuses).where(eq(statuses.id, statusId)).returning({ id: statuses.id }),
  ] as const;
}

export async function deleteStatus(db: DB, cfg: Config, statusId: string, viewerId: string): Promise<DeleteResult> {
  const b = await loadStatusBundle(db, [statusId], viewerId);
  const s = b.statuses.get(statusId);
  if (!s || s.accountId !== viewerId) throw notFound();
  const rendered = renderStatusFrom(cfg, b, statusId);
  if (!rendered) throw notFound();
  // A deleted status's URI answers 410 with a Tombstone from now on (federation/routes.ts), as Mastodon's does.
  const tomb = s.reblogOfId ? [] : [db.insert(tombstones).values({ uri: s.uri, accountId: s.accountId, createdAt: Date.now() }).onConflictDoNothing()];
  const res = await db.batch([...tomb, ...deleteStatusStatements(db, statusId)] as unknown as [any, ...any[]]);
  const gone = res[res.length - 1] as { id: string }[];
  if (gone.length === 0) throw notFound(); // deleted by a parallel request
  const reblogs = res[res.length - 2] as { id: string; accountId: string }[];
  const jobs: JobMessage[] = [
    { type: "unfanout", statusId, accountId: s.accountId, reblogOfId: s.reblogOfId },
    ...reblogs.map((r): JobMessage => ({ type: "unfanout", statusId: r.id, accountId: r.accountId, reblogOfId: statusId })),
  ];
  const orig = s.reblogOfId ? b.statuses.get(s.reblogOfId) : undefined;
  jobs.push(federateJob(cfg.origin, orig ? { kind: "undo_announce", accountId: s.accountId, reblogUri: s.uri, objectUri: orig.uri, objectAuthorId: orig.accountId }
    : { kind: "delete_status", statusId, accountId: s.accountId, uri: s.uri, visibility: s.visibility, mentionUris: (b.mentions.get(statusId) ?? []).map((a) => a.uri) }));
  return { status: { ...rendered, text: s.text, spoiler_text: s.spoilerText }, jobs };
}

