// Reblogs (boosts) of a status and their undo. A reblog is a status row pointing at the original; it is fanned out
// like a post and federated as an Announce.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statuses } from "../db/schema";
import type { Effects } from "../effects/collector";
import { loadStatusBundle, newStatusFields, renderStatus, type StatusRow } from "../entities/status";
import { statusUri } from "../entities/urls";
import type { Config } from "../env";
import { notFound, unprocessable } from "../lib/errors";
import { padId, snowflake } from "../lib/ids";
import type { UserViewer } from "../oauth/guard";
import { bump, loadVisible, render, renderAnyway, targetOf, type Json } from "./interaction-target";
import { removeStatus } from "./delete-status";
import { notificationStatement, retractNotificationStatement } from "./notifications";

export interface ReblogResult {
  status: Json;
}

export async function reblog(db: DB, fx: Effects, cfg: Config, viewer: UserViewer, id: string, visibility: string | undefined): Promise<ReblogResult> {
  const me = viewer.account;
  const { b, target } = await loadVisible(db, cfg, id, me.id);
  // Spec: reblog of a private status is a generic 422 (the author may boost their own followers-only post).
  if (target.visibility === "direct" || (target.visibility === "private" && target.accountId !== me.id)) {
    throw unprocessable("This action is not allowed");
  }
  if (b.viewer.reblogged.has(target.id)) return { status: await existingReblog(db, cfg, me.id, target.id) };

  const def = viewer.user.settings?.["posting:default:visibility"];
  const vis = target.visibility === "private" ? "private" : (visibility ?? (def && def !== "direct" ? def : "public"));
  const now = Date.now();
  const reblogId = snowflake(now);
  const pt = padId(target.id);
  const pv = padId(me.id);
  const row: StatusRow = {
    id: reblogId,
    uri: `${statusUri(cfg, me.username, reblogId)}/activity`,
    url: null,
    accountId: me.id,
    local: true,
    inReplyToId: null,
    inReplyToAccountId: null,
    reblogOfId: target.id,
    conversationId: null,
    text: "",
    content: "",
    spoilerText: "",
    sensitive: false,
    visibility: vis as StatusRow["visibility"],
    language: null,
    applicationId: viewer.applicationId,
    pollId: null,
    mediaIds: null,
    emojiShortcodes: null,
    ...newStatusFields(now),
  };
  const [ins] = await db.batch([
    // Conditional, so two parallel boosts make one reblog.
    db.run(sql`INSERT INTO statuses (id, uri, url, account_id, local, reblog_of_id, visibility, application_id, created_at, updated_at)
      SELECT ${padId(reblogId)}, ${row.uri}, NULL, ${pv}, 1, ${pt}, ${vis}, ${viewer.applicationId ? padId(viewer.applicationId) : null}, ${now}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM statuses WHERE account_id = ${pv} AND reblog_of_id = ${pt})`),
    notificationStatement(db, fx, { recipientId: target.accountId, fromAccountId: me.id, type: "reblog", statusId: target.id, activityId: reblogId }),
  ]);
  if (!(ins as D1Result).meta?.changes) {
    await retractNotificationStatement(db, target.accountId, "reblog", reblogId);
    return { status: await existingReblog(db, cfg, me.id, target.id) };
  }
  b.statuses.set(reblogId, row);
  b.accounts.set(me.id, { ...me, statusesCount: me.statusesCount + 1, lastStatusAt: now });
  bump(b, target.id, { reblogsCount: target.reblogsCount + 1 });
  b.viewer.reblogged.add(target.id);
  if (viewer.applicationId && viewer.application) b.apps.set(viewer.applicationId, viewer.application);
  fx.federate({ kind: "announce", reblogId });
  fx.add({ type: "fanout", statusId: reblogId });
  return { status: render(cfg, b, reblogId) };
}

async function existingReblog(db: DB, cfg: Config, viewerId: string, targetId: string): Promise<Json> {
  const [r] = await db
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, viewerId), eq(statuses.reblogOfId, targetId)))
    .limit(1);
  const out = r ? await renderStatus(db, cfg, r.id, viewerId) : null;
  if (!out) throw notFound();
  return out;
}

export async function unreblog(db: DB, fx: Effects, cfg: Config, id: string, viewerId: string): Promise<ReblogResult> {
  // Each of the viewer's boosts of the status goes the way any status goes (removeStatus): feeds, notifications,
  // open streams (a delete event for the boost) and fan-out, in one batch per boost.
  const mine = await db
    .select({ id: statuses.id, uri: statuses.uri, accountId: statuses.accountId, reblogOfId: statuses.reblogOfId })
    .from(statuses)
    .where(and(eq(statuses.accountId, viewerId), sql`${statuses.reblogOfId} = ${targetOf(id)}`));
  const removed: typeof mine = [];
  for (const r of mine) if (await removeStatus(db, fx, r)) removed.push(r);
  const targetId = removed[0]?.reblogOfId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.reblogged.delete(targetId);
  const status = removed.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
  const t = b.statuses.get(targetId);
  if (t) for (const r of removed) fx.federate({ kind: "undo_announce", accountId: viewerId, reblogUri: r.uri, objectUri: t.uri, objectAuthorId: t.accountId });
  return { status };
}
