// Reblogs (boosts) of a status and their undo. A reblog is a status row pointing at the original; it is fanned out
// like a post and federated as an Announce. `reblogChange` is the one boost, whether a local user boosts (REST) or a
// remote actor's Announce arrives (federation/inbox/handlers/announce.ts): same row, same notification, same effects.
import { and, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { BatchItem } from "drizzle-orm/batch";
import type { DB } from "../../db/client";
import { statuses } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { loadStatusBundle, newStatusFields, renderStatus, type StatusRow } from "../../entities/statuses/status";
import { statusUri } from "../../entities/urls";
import type { Config } from "../../env";
import { notFound, unprocessable } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import type { UserViewer } from "../../db/viewer";
import type { Change } from "../relationships/follows";
import { bump, loadVisible, render, renderAnyway, targetOf, type Json, type UndoneStatus } from "./interaction-target";
import { removeStatus } from "../statuses/delete-status";
import { notificationWrite, retractNotificationStatement } from "../notifications/notifications";

export interface ReblogResult {
  /** The boost (reblog), or the boosted status (unreblog: only its id when its author is suspended). */
  status: UndoneStatus;
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
  const change = reblogChange(db, { ...row, reblogOfId: target.id, targetAccountId: target.accountId });
  if (!(await applyReblog(db, change, change.stmts, fx)).written) return { status: await existingReblog(db, cfg, me.id, target.id) };
  b.statuses.set(reblogId, row);
  b.accounts.set(me.id, { ...me, statusesCount: me.statusesCount + 1, lastStatusAt: now });
  bump(b, target.id, { reblogsCount: target.reblogsCount + 1 });
  b.viewer.reblogged.add(target.id);
  if (viewer.applicationId && viewer.application) b.apps.set(viewer.applicationId, viewer.application);
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
  // With the boosted status's URI and author, which the Undo{Announce} names (recorded with each removal's batch).
  const original = alias(statuses, "original");
  const mine = await db
    .select({
      id: statuses.id,
      uri: statuses.uri,
      accountId: statuses.accountId,
      reblogOfId: statuses.reblogOfId,
      objectUri: original.uri,
      objectAuthorId: original.accountId,
    })
    .from(statuses)
    .leftJoin(original, eq(original.id, statuses.reblogOfId))
    .where(and(eq(statuses.accountId, viewerId), sql`${statuses.reblogOfId} = ${targetOf(id)}`));
  const removed: typeof mine = [];
  for (const r of mine) {
    const undo = (fx: Effects) => {
      if (r.objectUri && r.objectAuthorId)
        fx.federate({ kind: "undo_announce", accountId: viewerId, reblogUri: r.uri, objectUri: r.objectUri, objectAuthorId: r.objectAuthorId });
    };
    if (await removeStatus(db, fx, r, [], { record: undo })) removed.push(r);
  }
  const targetId = removed[0]?.reblogOfId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.reblogged.delete(targetId);
  const status = removed.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
  return { status };
}

/** A boost to write: the reblog's own row (a local one is federated as an Announce) and its original's author. */
export type NewReblog = Pick<StatusRow, "id" | "uri" | "accountId" | "local" | "visibility" | "applicationId" | "createdAt" | "updatedAt"> & {
  reblogOfId: string;
  targetAccountId: string;
};

/** A boost's change, how to take back its notification when the row was not written, and whether it will be. */
export interface ReblogChange extends Change {
  retract: () => ReturnType<typeof retractNotificationStatement>;
  /** True before the batch when its row will be written (the account has no boost of the status yet). */
  absent: SQL;
  /** `effects` but the fan-out: for a caller whose batch wrote the first fan-out chunk itself (an incoming Announce). */
  effectsBesideFanOut: (fx: Effects) => void;
}

/**
 * `r.accountId` boosts `r.reblogOfId`: the reblog's row, written only when that account has no boost of it yet (so two
 * parallel boosts, or an Announce delivered twice, make one), and the original's author's notification. Once it
 * committed (applyReblog), the notification is streamed and pushed, the reblog fanned out, and a local one federated.
 */
export function reblogChange(db: DB, r: NewReblog): ReblogChange {
  const note = notificationWrite(db, { recipientId: r.targetAccountId, fromAccountId: r.accountId, type: "reblog", statusId: r.reblogOfId, activityId: r.id });
  const beside = (fx: Effects) => {
    fx.add(note.effect);
    if (r.local) fx.federate({ kind: "announce", reblogId: r.id });
  };
  return {
    stmts: [reblogRowStatement(db, r), note.statement],
    notify: [note.effect],
    retract: () => retractNotificationStatement(db, r.targetAccountId, "reblog", r.id),
    absent: noBoostYet(r.accountId, r.reblogOfId),
    effects: (fx) => {
      beside(fx);
      fx.add({ type: "fanout", statusId: r.id });
    },
    effectsBesideFanOut: beside,
  };
}

/** `accountId` has no boost of `statusId` yet: the one condition a boost's row, and its journaled effects, go under. */
const noBoostYet = (accountId: string, statusId: string) =>
  sql`NOT EXISTS (SELECT 1 FROM statuses WHERE account_id = ${padId(accountId)} AND reblog_of_id = ${padId(statusId)})`;

/**
 * The reblog's row alone, written only when its account has no boost of that status yet: the one statement every road
 * that makes a boost writes it with (reblogChange for the API and the inbox; an archive import, which tells nobody).
 */
export function reblogRowStatement(db: DB, r: Omit<NewReblog, "targetAccountId">) {
  const pv = padId(r.accountId);
  const pt = padId(r.reblogOfId);
  return db.run(sql`INSERT INTO statuses (id, uri, url, account_id, local, reblog_of_id, visibility, application_id, created_at, updated_at)
    SELECT ${padId(r.id)}, ${r.uri}, NULL, ${pv}, ${r.local ? 1 : 0}, ${pt}, ${r.visibility}, ${r.applicationId ? padId(r.applicationId) : null},
      ${r.createdAt}, ${r.updatedAt}
    WHERE ${noBoostYet(r.accountId, r.reblogOfId)}`);
}

/**
 * Writes a boost, its statements first in the batch (an inbox item's finishing ones may follow: `stmts`). `written`:
 * false when the account had boosted the status already (the notification made for nothing is then taken back). With
 * `fx`, its effects are committed with it when it is written (src/effects/commit.ts); otherwise the caller records
 * `change.effects` when written.
 */
export async function applyReblog(
  db: DB,
  change: ReblogChange,
  stmts: BatchItem<"sqlite">[] = change.stmts,
  fx?: Effects,
): Promise<{ written: boolean; results: readonly unknown[] }> {
  const rowWritten = (results: readonly unknown[]) => !!(results[0] as D1Result).meta?.changes;
  const results = fx
    ? ((await commit(db, fx, stmts, change.effects, { when: change.absent, applied: rowWritten })) as unknown[])
    : await db.batch(stmts as [BatchItem<"sqlite">]);
  const written = rowWritten(results);
  if (!written) await change.retract();
  return { written, results };
}
