// Favourite, reblog, bookmark, pin and conversation mute, and their undos. Doing one needs the status to be visible
// (security B15: 404 otherwise); undoing one's own works even after access was lost (spec). The status is loaded
// once with its viewer relations (one batch), the write is one batch, and the response is rendered from the loaded
// bundle with the change applied in memory.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { cursorOrder, cursorWhere } from "../db/keyset";
import { accounts, bookmarks, favourites, statuses } from "../db/schema";
import { loadStatusBundle, renderStatus, renderStatusFrom, type StatusBundle, type StatusRow } from "../entities/status";
import { statusUri } from "../entities/urls";
import type { Config } from "../env";
import { notFound, unprocessable, validationFailed } from "../lib/errors";
import { padId, snowflake } from "../lib/ids";
import type { Page } from "../lib/pagination";
import type { UserViewer } from "../oauth/guard";
import type { AccountRow } from "../oauth/viewer";
import type { JobMessage } from "./jobs";
import { notificationStatement } from "./notifications";
import { hiddenAuthorFor, statusReadableBy } from "./visibility";
import { federateJob, type Federator } from "../federation/enqueue";

export const MAX_PINNED_STATUSES = 5;

type Json = Record<string, unknown>;

interface Loaded {
  b: StatusBundle;
  /** The status the action applies to: the original when the id is a reblog. */
  target: StatusRow;
}

async function loadVisible(db: DB, cfg: Config, id: string, viewerId: string): Promise<Loaded> {
  const b = await loadStatusBundle(db, [id], viewerId);
  const s = b.statuses.get(id);
  if (!s || !renderStatusFrom(cfg, b, id)) throw notFound();
  const target = b.statuses.get(s.reblogOfId ?? id);
  if (!target) throw notFound();
  return { b, target };
}

function bump(b: StatusBundle, id: string, patch: Partial<StatusRow>) {
  const s = b.statuses.get(id);
  if (s) b.statuses.set(id, { ...s, ...patch });
}

function render(cfg: Config, b: StatusBundle, id: string): Json {
  const r = renderStatusFrom(cfg, b, id);
  if (!r) throw notFound();
  return r;
}

/**
 * Renders a status the viewer had interacted with but may no longer see (author blocked them, follow ended): the
 * undo response still describes the status, as Mastodon's does.
 */
function renderAnyway(cfg: Config, b: StatusBundle, id: string): Json {
  const visible = renderStatusFrom(cfg, b, id);
  if (visible) return visible;
  const s = b.statuses.get(id);
  if (!s) throw notFound();
  const v = b.viewer.id!;
  for (const sid of [id, s.reblogOfId].filter(Boolean) as string[]) {
    const row = b.statuses.get(sid);
    if (!row) continue;
    b.viewer.blockedBy.delete(row.accountId);
    if (!b.mentionIds.has(sid)) b.mentionIds.set(sid, new Set());
    b.mentionIds.get(sid)!.add(v);
  }
  return renderStatusFrom(cfg, b, id) ?? { id };
}

const targetOf = (id: string) => sql`coalesce((SELECT reblog_of_id FROM statuses WHERE id = ${padId(id)}), ${padId(id)})`;

function isUniqueViolation(err: unknown, table: string): boolean {
  for (let e: any = err, i = 0; e && i < 4; e = e.cause, i++) {
    const m = String(e.message ?? e);
    if (m.includes("UNIQUE") && m.includes(table)) return true;
  }
  return false;
}

// ---- favourites ----

export async function favourite(db: DB, cfg: Config, id: string, viewerId: string, fed?: Federator): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!b.viewer.favourited.has(target.id)) {
    const now = Date.now();
    const favId = snowflake(now);
    try {
      await db.batch([
        db.insert(favourites).values({ id: favId, accountId: viewerId, statusId: target.id, uri: null, createdAt: now }),
        notificationStatement(db, { recipientId: target.accountId, fromAccountId: viewerId, type: "favourite", statusId: target.id, activityId: favId }),
      ]);
      bump(b, target.id, { favouritesCount: target.favouritesCount + 1 });
      if (fed && b.accounts.get(target.accountId)?.domain) await fed.send({ kind: "like", accountId: viewerId, statusId: target.id, favouriteId: favId });
    } catch (err) {
      if (!isUniqueViolation(err, "favourites")) throw err; // a parallel request favourited it first
    }
    b.viewer.favourited.add(target.id);
  }
  return render(cfg, b, target.id);
}

export async function unfavourite(db: DB, cfg: Config, id: string, viewerId: string, fed?: Federator): Promise<Json> {
  const pv = padId(viewerId);
  const [, removed] = await db.batch([
    db.run(sql`DELETE FROM notifications WHERE type = 'favourite'
      AND activity_id IN (SELECT id FROM favourites WHERE account_id = ${pv} AND status_id = ${targetOf(id)})`),
    db.delete(favourites).where(and(eq(favourites.accountId, viewerId), sql`${favourites.statusId} = ${targetOf(id)}`)).returning({ statusId: favourites.statusId, id: favourites.id }),
  ]);
  const targetId = removed[0]?.statusId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.favourited.delete(targetId);
  if (fed && removed[0] && b.accounts.get(b.statuses.get(targetId)?.accountId ?? "")?.domain) await fed.send({ kind: "undo_like", accountId: viewerId, statusId: targetId, favouriteId: removed[0].id });
  return removed.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
}

// ---- reblogs ----

export interface ReblogResult {
  status: Json;
  jobs: JobMessage[];
}

export async function reblog(db: DB, cfg: Config, viewer: UserViewer, id: string, visibility: string | undefined): Promise<ReblogResult> {
  const me = viewer.account;
  const { b, target } = await loadVisible(db, cfg, id, me.id);
  // Spec: reblog of a private status is a generic 422 (the author may boost their own followers-only post).
  if (target.visibility === "direct" || (target.visibility === "private" && target.accountId !== me.id)) {
    throw unprocessable("This action is not allowed");
  }
  if (b.viewer.reblogged.has(target.id)) return { status: await existingReblog(db, cfg, me.id, target.id), jobs: [] };

  const def = viewer.user.settings?.["posting:default:visibility"];
  const vis = target.visibility === "private" ? "private" : visibility ?? (def && def !== "direct" ? def : "public");
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
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    createdAt: now,
    editedAt: null,
    updatedAt: now,
  };
  const [ins] = await db.batch([
    // Conditional, so two parallel boosts make one reblog.
    db.run(sql`INSERT INTO statuses (id, uri, url, account_id, local, reblog_of_id, visibility, application_id, created_at, updated_at)
      SELECT ${padId(reblogId)}, ${row.uri}, NULL, ${pv}, 1, ${pt}, ${vis}, ${viewer.applicationId ? padId(viewer.applicationId) : null}, ${now}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM statuses WHERE account_id = ${pv} AND reblog_of_id = ${pt})`),
    notificationStatement(db, { recipientId: target.accountId, fromAccountId: me.id, type: "reblog", statusId: target.id, activityId: reblogId }),
  ]);
  if (!(ins as D1Result).meta?.changes) {
    await db.run(sql`DELETE FROM notifications WHERE type = 'reblog' AND activity_id = ${padId(reblogId)}`);
    return { status: await existingReblog(db, cfg, me.id, target.id), jobs: [] };
  }
  b.statuses.set(reblogId, row);
  b.accounts.set(me.id, { ...me, statusesCount: me.statusesCount + 1, lastStatusAt: now });
  bump(b, target.id, { reblogsCount: target.reblogsCount + 1 });
  b.viewer.reblogged.add(target.id);
  if (viewer.applicationId && viewer.application) b.apps.set(viewer.applicationId, viewer.application);
  return { status: render(cfg, b, reblogId), jobs: [federateJob(cfg.origin, { kind: "announce", reblogId }), { type: "fanout", statusId: reblogId }] };
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

export async function unreblog(db: DB, cfg: Config, id: string, viewerId: string): Promise<ReblogResult> {
  const pv = padId(viewerId);
  const mine = sql`(SELECT id FROM statuses WHERE account_id = ${pv} AND reblog_of_id = ${targetOf(id)})`;
  const res = await db.batch([
    db.run(sql`DELETE FROM notifications WHERE type = 'reblog' AND activity_id IN ${mine}`),
    db.run(sql`DELETE FROM home_feed WHERE status_id IN ${mine}`),
    db.run(sql`DELETE FROM list_feed WHERE status_id IN ${mine}`),
    db.run(sql`DELETE FROM status_pins WHERE status_id IN ${mine}`),
    db.run(sql`DELETE FROM bookmarks WHERE status_id IN ${mine}`),
    db.run(sql`DELETE FROM favourites WHERE status_id IN ${mine}`),
    db
      .delete(statuses)
      .where(and(eq(statuses.accountId, viewerId), sql`${statuses.reblogOfId} = ${targetOf(id)}`))
      .returning({ id: statuses.id, reblogOfId: statuses.reblogOfId, uri: statuses.uri }),
  ]);
  const removed = res[res.length - 1] as { id: string; reblogOfId: string; uri: string }[];
  const targetId = removed[0]?.reblogOfId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.reblogged.delete(targetId);
  const status = removed.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
  const t = b.statuses.get(targetId);
  const jobs = t ? removed.map((r) => federateJob(cfg.origin, { kind: "undo_announce", accountId: viewerId, reblogUri: r.uri, objectUri: t.uri, objectAuthorId: t.accountId })) : [];
  jobs.push(...removed.map((r): JobMessage => ({ type: "unfanout", statusId: r.id, accountId: viewerId, reblogOfId: r.reblogOfId })));
  return { status, jobs };
}

// ---- bookmarks ----

export async function bookmark(db: DB, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!b.viewer.bookmarked.has(target.id)) {
    const now = Date.now();
    await db.run(sql`INSERT OR IGNORE INTO bookmarks (id, account_id, status_id, created_at)
      VALUES (${padId(snowflake(now))}, ${padId(viewerId)}, ${padId(target.id)}, ${now})`);
    b.viewer.bookmarked.add(target.id);
  }
  return render(cfg, b, target.id);
}

export async function unbookmark(db: DB, cfg: Config, id: string, viewerId: string): Promise<Json> {
  const rows = await db
    .delete(bookmarks)
    .where(and(eq(bookmarks.accountId, viewerId), sql`${bookmarks.statusId} = ${targetOf(id)}`))
    .returning({ statusId: bookmarks.statusId });
  const targetId = rows[0]?.statusId ?? id;
  const b = await loadStatusBundle(db, [targetId], viewerId);
  b.viewer.bookmarked.delete(targetId);
  return rows.length ? renderAnyway(cfg, b, targetId) : render(cfg, b, targetId);
}

// ---- pins (own statuses of any visibility; not reblogs) ----

export async function pin(db: DB, cfg: Config, id: string, viewerId: string, fed?: Federator): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  const s = b.statuses.get(id)!;
  if (s.reblogOfId) throw validationFailed("Boosts cannot be pinned");
  if (s.accountId !== viewerId) throw validationFailed("You can only pin your own posts");
  if (!b.viewer.pinned.has(id)) {
    const now = Date.now();
    const pv = padId(viewerId);
    const r = await db.run(sql`INSERT OR IGNORE INTO status_pins (id, account_id, status_id, created_at)
      SELECT ${padId(snowflake(now))}, ${pv}, ${padId(id)}, ${now}
      WHERE (SELECT count(*) FROM status_pins WHERE account_id = ${pv}) < ${MAX_PINNED_STATUSES}`);
    if (!(r as D1Result).meta?.changes) throw validationFailed("You have already pinned the maximum number of posts");
    b.viewer.pinned.add(id);
    await fed?.send({ kind: "pin", accountId: viewerId, statusId: id, remove: false });
  }
  return render(cfg, b, id);
}

export async function unpin(db: DB, cfg: Config, id: string, viewerId: string, fed?: Federator): Promise<Json> {
  const { b } = await loadVisible(db, cfg, id, viewerId);
  if (b.viewer.pinned.has(id)) {
    await db.run(sql`DELETE FROM status_pins WHERE account_id = ${padId(viewerId)} AND status_id = ${padId(id)}`);
    b.viewer.pinned.delete(id);
    await fed?.send({ kind: "pin", accountId: viewerId, statusId: id, remove: true });
  }
  return render(cfg, b, id);
}

// ---- conversation mutes ----

export async function muteConversation(db: DB, cfg: Config, id: string, viewerId: string, mute: boolean): Promise<Json> {
  const { b, target } = await loadVisible(db, cfg, id, viewerId);
  if (!target.conversationId) throw validationFailed("This status is not part of a conversation");
  const pc = padId(target.conversationId);
  const pv = padId(viewerId);
  if (mute) {
    await db.run(sql`INSERT OR IGNORE INTO conversation_mutes (account_id, conversation_id) VALUES (${pv}, ${pc})`);
    b.viewer.mutedConversations.add(target.conversationId);
  } else {
    await db.run(sql`DELETE FROM conversation_mutes WHERE account_id = ${pv} AND conversation_id = ${pc}`);
    b.viewer.mutedConversations.delete(target.conversationId);
  }
  return render(cfg, b, target.id);
}

// ---- who favourited / reblogged (internal row ids as cursors) ----

export interface AccountPage {
  accounts: AccountRow[];
  firstCursor?: string;
  lastCursor?: string;
  full: boolean;
}

// Joined selects alias the cursor column: D1 batch results are keyed by column name, so a second `id` would
// overwrite the account's.
export async function favouritedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  const conds = [eq(favourites.statusId, statusId), sql`${accounts.suspendedAt} IS NULL`, cursorWhere(favourites.id, page)];
  if (viewerId) conds.push(sql`NOT ${hiddenAuthorFor(viewerId, sql`${favourites.accountId}`)}`);
  const [root, rows] = await db.batch([
    db.select({ id: statuses.id }).from(statuses).where(and(eq(statuses.id, statusId), statusReadableBy(viewerId))).limit(1),
    db
      .select({ cursor: sql`${favourites.id}`.mapWith(favourites.id).as("row_cursor"), account: accounts })
      .from(favourites)
      .innerJoin(accounts, eq(accounts.id, favourites.accountId))
      .where(and(...conds))
      .orderBy(cursorOrder(favourites.id, page))
      .limit(page.limit),
  ]);
  if (!root.length) throw notFound();
  return toPage(rows, page);
}

export async function rebloggedBy(db: DB, statusId: string, viewerId: string | null, page: Page): Promise<AccountPage> {
  const conds = [eq(statuses.reblogOfId, statusId), sql`${accounts.suspendedAt} IS NULL`, statusReadableBy(viewerId), cursorWhere(statuses.id, page)];
  if (viewerId) conds.push(sql`NOT ${hiddenAuthorFor(viewerId, statuses.accountId)}`);
  const [root, rows] = await db.batch([
    db.select({ id: statuses.id }).from(statuses).where(and(eq(statuses.id, statusId), statusReadableBy(viewerId))).limit(1),
    db
      .select({ cursor: sql`${statuses.id}`.mapWith(statuses.id).as("row_cursor"), account: accounts })
      .from(statuses)
      .innerJoin(accounts, eq(accounts.id, statuses.accountId))
      .where(and(...conds))
      .orderBy(cursorOrder(statuses.id, page))
      .limit(page.limit),
  ]);
  if (!root.length) throw notFound();
  return toPage(rows, page);
}

function toPage(rows: { cursor: string; account: AccountRow }[], page: Page): AccountPage {
  const list = page.minId ? rows.slice().reverse() : rows;
  return {
    accounts: list.map((r) => r.account),
    firstCursor: list[0]?.cursor,
    lastCursor: list[list.length - 1]?.cursor,
    full: rows.length === page.limit,
  };
}
