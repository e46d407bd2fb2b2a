// The publish side of the streaming API: what the effects consumer calls once a write has committed. Each function
// plans its events from who is listening (publishPlanned): nothing is rendered or read from D1 for nobody. Then the
// router takes the events with their targets; account streams (user, list, direct) are rendered by each account's
// hub for its viewer, shared streams (public, hashtag) get one signed-out rendering per event, filtered per viewer.
// While someone listens that costs one router call, not two: the isolate plans from the listeners it last heard of
// and the router publishes only if they are still its listeners (else it says who listens now, and the plan runs
// again). With nobody listening, one call asks and nothing more is done.
//
// Which streams a status reaches mirrors the REST timelines:
// - `user`: the accounts whose home feed received it (fan-out's RETURNING rows);
// - `list`: the lists whose feed received it;
// - `direct`: `conversation` events (the participant's Conversation, rendered for them) when a direct status joins a
//   conversation, as Mastodon's PushConversationWorker; deletes of direct statuses;
// - `public`, `public:local|remote` (+`:media`): public, not a boost, author neither suspended nor silenced, not a
//   reply to someone else (feeds-read.ts publicConds); `:media` with attachments;
// - `hashtag`, `hashtag:local`: the same without the reply rule, per tag of the status (shared-render.ts).
import { eq, inArray, sql } from "drizzle-orm";
import { type DB, runBatch } from "../db/client";
import type { Visibility } from "../db/schema";
import { renderNotifications } from "../entities/notifications/notification";
import type { Config, Env } from "../env";
import { padId, unpadId } from "../lib/text/ids";
import { accountConversations, announcements } from "../db/schema";
import { renderAnnouncements, renderReactionEvent } from "../entities/instance/announcement";
import { renderConversations } from "../entities/notifications/conversation";
import { findNotifications, notificationRecipientsStatement, type NotificationWithRefs, withReportTargets } from "../queries/notifications/notifications";
import type { FanOutResult, FeedRemoval } from "../timelines/fanout";
import { type AccountPart, type Envelope, entry, type Routed } from "./protocol";
import { publishPlanned } from "./listeners";
import { type AheadParts, type AheadUpdate, aheadParts, type FeedsOf, feedsOfStatements } from "./read-ahead";
import { routerStub } from "./router";
import type { SharedPart } from "./shared-render";
import { factsFor, type StatusParts, statusParts } from "./status-parts";
import { hubStub } from "./streaming-do";
import { userHub } from "./protocol";

/** What fan-out delivered (fanOut's result can be passed as is). */
export type Delivered = Pick<FanOutResult, "homeAccountIds" | "lists" | "shared">;

/** What a deleted status was, read before its row went: decides the shared streams that hear of the deletion. */
export interface DeletedStatusInfo {
  visibility: Visibility;
  local: boolean;
  reblog: boolean;
  /** Normalised tag names. */
  tags: string[];
}

/** Events the account streams carry as given (payload: a JSON string or object, an id, or nothing). */
export type AccountEvent =
  | "filters_changed"
  | "announcement"
  | "announcement.reaction"
  | "announcement.delete"
  | "conversation"
  | "notifications_merged"
  | "notification"
  | "delete";

type AccountTargets = Map<string, Set<string>>;

function addTarget(t: AccountTargets, accountId: string, ...keys: string[]) {
  const set = entry(t, accountId, () => new Set<string>());
  for (const k of keys) set.add(k);
}

function accountsOf(t: AccountTargets, online: Iterable<string>): { id: string; keys: string[] }[] {
  const out: { id: string; keys: string[] }[] = [];
  for (const id of online) {
    const keys = t.get(id);
    if (keys?.size) out.push({ id, keys: [...keys] });
  }
  return out;
}

/** A fan-out chunk of a status to announce on the streams (publishStatuses). */
export interface StatusPublication {
  statusId: string;
  delivered: Delivered;
  /** The configuration it is rendered with. */
  cfg: Config;
  /** Its renderings and facts, read at the end of the batch that wrote it (publishReadAhead). */
  ahead?: AheadParts;
}

/**
 * A new status after a fan-out chunk committed: `update` on the user streams of the home feeds that received it, the
 * list streams of the lists that did, `direct` for direct statuses, and (for the first chunk, `delivered.shared`) the
 * public and hashtag streams it belongs on.
 */
export function publishStatus(db: DB, env: Env, cfg: Config, statusId: string, delivered: Delivered): Promise<void> {
  return publishStatuses(db, env, [{ statusId, delivered, cfg }]);
}

/**
 * publishStatus for several statuses at once, in their order (a JOBS batch's fan-outs): one router call (two when
 * nobody was heard listening), one D1 batch for all the renderings and the connected viewers' facts, whatever their
 * number of statuses and viewers (status-parts.ts): each status is rendered once for the account streams and once for
 * the shared ones, and every account's hub completes it for its viewer without reading D1.
 */
export async function publishStatuses(db: DB, env: Env, items: StatusPublication[]): Promise<void> {
  const targetsOf = items.map((item) => {
    const targets: AccountTargets = new Map();
    // A direct status is not an `update` on `direct`: that stream hears `conversation` (publishConversations).
    for (const id of item.delivered.homeAccountIds) addTarget(targets, id, "user");
    for (const l of item.delivered.lists) addTarget(targets, l.accountId, `list:${l.listId}`);
    return targets;
  });
  if (!targetsOf.some((t) => t.size) && !items.some((i) => i.delivered.shared)) return;
  await publishPlanned(env, async (l) => {
    const accountsPer = items.map((_, i) => accountsOf(targetsOf[i] ?? new Map(), l.online));
    const parts =
      (await aheadParts(items, l, accountsPer)) ??
      (await statusParts(
        db,
        items.map(({ statusId, cfg, delivered }, i) => ({
          statusId,
          cfg,
          shared: !!delivered.shared,
          accounts: (accountsPer[i] ?? []).map((a) => a.id),
        })),
        l.shared,
      ));
    const events: Routed[] = [];
    items.forEach(({ statusId, cfg, delivered }, i) => {
      const accounts = accountsPer[i] ?? [];
      const part = delivered.shared ? parts.shared.get(statusId) : undefined;
      if (!accounts.length && !part && !delivered.shared) return;
      const envelope = statusEnvelope("update", statusId, cfg, part, parts.account.get(statusId));
      events.push({ envelope, accounts: withFacts(parts, statusId, accounts), shared: part?.keys ?? [], ...(delivered.shared ? { recheck: true } : {}) });
    });
    return events;
  });
}

function statusEnvelope(
  event: "update" | "status.update",
  statusId: string,
  cfg: Config,
  shared: SharedPart | undefined,
  account: AccountPart | undefined,
): Envelope {
  return {
    kind: "status",
    event,
    statusId,
    cfg,
    ...(shared ? { payload: shared.payload, meta: shared.meta } : {}),
    ...(account ? { account } : {}),
  };
}

/** The accounts of an event, each with its facts for the status when it has any. */
function withFacts(parts: StatusParts, statusId: string, accounts: { id: string; keys: string[] }[]) {
  if (!parts.account.has(statusId)) return accounts;
  return accounts.map((a) => {
    const facts = factsFor(parts, statusId, a.id);
    return facts ? { ...a, facts } : a;
  });
}

/**
 * An edited status (or one whose poll changed): `status.update` to every home and list feed holding it, `direct` for
 * direct ones, and the public and hashtag streams it belongs on. `ahead`: its reads, made with the edit's writes.
 */
export async function publishStatusUpdate(db: DB, env: Env, cfg: Config, statusId: string, ahead?: AheadUpdate): Promise<void> {
  await publishPlanned(env, async (l) => {
    const online = l.online;
    // Reads made ahead serve a plan for the very listeners they were read for (and every account online then).
    const fresh = !ahead || ahead.listeners !== l;
    const targets: AccountTargets = new Map();
    if (online.size) {
      const feeds = fresh ? await runBatch(db, feedsOfStatements(db, statusId)) : ahead.feeds;
      const [homes, listRows] = feeds as unknown as FeedsOf;
      for (const h of homes) addTarget(targets, unpadId(String(h.account_id)), "user");
      for (const r of listRows) addTarget(targets, unpadId(String(r.account_id)), `list:${unpadId(String(r.list_id))}`);
    }
    const accounts = accountsOf(targets, online);
    const parts =
      (fresh ? null : await ahead.parts) ?? (await statusParts(db, [{ statusId, cfg, shared: true, accounts: accounts.map((a) => a.id) }], l.shared));
    const shared = parts.shared.get(statusId);
    const envelope = statusEnvelope("status.update", statusId, cfg, shared, parts.account.get(statusId));
    return [{ envelope, accounts: withFacts(parts, statusId, accounts), shared: shared?.keys ?? [], recheck: true }];
  });
}

/**
 * A status left the feeds (deleted, or a boost undone): `delete` with each removed entry's id to its feed's owner
 * (user, list, and direct for direct statuses), and with the status id to the public and hashtag streams when it was
 * on them. `info`: what the status was (statusStreamInfo, read before the row was deleted); null when unknown or it
 * was never on a shared stream.
 */
export async function publishDelete(env: Env, statusId: string, removed: FeedRemoval, info: DeletedStatusInfo | null): Promise<void> {
  const byId = new Map<string, AccountTargets>();
  const target = (id: string) => entry(byId, id, () => new Map<string, Set<string>>());
  for (const h of removed.home) addTarget(target(h.statusId), h.accountId, ...(info?.visibility === "direct" ? ["user", "direct"] : ["user"]));
  for (const l of removed.lists) addTarget(target(l.statusId), l.accountId, `list:${l.listId}`);
  const shared: string[] = [];
  if (info && info.visibility === "public" && !info.reblog) {
    const where = info.local ? "local" : "remote";
    shared.push("public", `public:${where}`, "public:media", `public:${where}:media`);
    for (const t of info.tags) {
      shared.push(`hashtag:${t}`);
      if (info.local) shared.push(`hashtag:local:${t}`);
    }
  }
  if (!byId.size && !shared.length) return;
  await publishPlanned(env, (l) => {
    const events: Routed[] = [];
    // Every shared key, listened to or not: the router sends it to listeners, and keeps it for a late subscription.
    if (shared.length) events.push({ envelope: { kind: "raw", event: "delete", payload: statusId }, shared });
    for (const [id, t] of byId) {
      const accounts = accountsOf(t, l.online);
      if (accounts.length) events.push({ envelope: { kind: "raw", event: "delete", payload: id }, accounts });
    }
    return events;
  });
}

/**
 * What publishDelete needs to know of a status, as one statement to put in the deleting batch before the status row
 * goes (toDeletedStatusInfo reads its rows), or to run alone with statusStreamInfo.
 */
export function statusStreamInfoStatement(db: DB, statusId: string) {
  return db.all<DeletedStatusRow>(sql`SELECT s.visibility AS visibility, s.local AS local, s.reblog_of_id AS reblog,
      (SELECT json_group_array(t.name) FROM status_tags st JOIN tags t ON t.id = st.tag_id WHERE st.status_id = s.id) AS tags
    FROM statuses s WHERE s.id = ${padId(statusId)} LIMIT 1`);
}

export interface DeletedStatusRow {
  visibility: Visibility;
  local: number;
  reblog: string | null;
  tags: string | null;
}

export function toDeletedStatusInfo(rows: DeletedStatusRow[]): DeletedStatusInfo | null {
  const r = rows[0];
  if (!r) return null;
  let tags: string[] = [];
  try {
    tags = r.tags ? (JSON.parse(r.tags) as string[]) : [];
  } catch {}
  return { visibility: r.visibility, local: Number(r.local) === 1, reblog: r.reblog != null, tags };
}

export async function statusStreamInfo(db: DB, statusId: string): Promise<DeletedStatusInfo | null> {
  return toDeletedStatusInfo(await statusStreamInfoStatement(db, statusId));
}

/**
 * Direct statuses that joined conversations (fan-out's `conversations`): `conversation` on each owner's `direct`
 * stream, the Conversation rendered for them. Nothing is read for owners with no connection.
 */
export async function publishConversations(db: DB, env: Env, cfg: Config, rows: { id: string; accountId: string }[]): Promise<void> {
  if (!rows.length) return;
  await publishPlanned(env, async ({ online }) => {
    const wanted = rows.filter((r) => online.has(r.accountId));
    if (!wanted.length) return [];
    const found = await db
      .select()
      .from(accountConversations)
      .where(
        inArray(
          accountConversations.id,
          wanted.map((r) => Number(r.id)),
        ),
      );
    const batches = await Promise.all(found.map(async (row) => ({ row, rendered: (await renderConversations(db, cfg, [row], row.accountId))[0] })));
    return batches.flatMap(({ row, rendered }) =>
      rendered
        ? [
            {
              envelope: { kind: "raw" as const, event: "conversation", payload: JSON.stringify(rendered) },
              accounts: [{ id: row.accountId, keys: ["direct"] }],
            },
          ]
        : [],
    );
  });
}

/** A new notification as its recipient sees it, read before asking who listens (notificationsForRecipientsStatement). */
type RecipientRow = Omit<NotificationWithRefs, "reportTarget">;

/**
 * Committed notifications: `notification` on each recipient's `user:notification` stream and on `user` for tokens
 * with read or read:notifications, rendered for the recipient. However many (a fan-out chunk raises up to 500 `status`
 * notifications at once): one query for the recipients, who listens (publishPlanned), a rendering per connected
 * recipient (six at a time: its notifications, then their statuses); nothing more is read for one with no connection.
 * `pre`: what the caller already read with its other reads of them, either the recipients (`{ id, account_id }`) or,
 * for a few notifications, the rows each recipient sees (then a connected recipient costs only its statuses' read).
 */
export async function publishNotifications(
  db: DB,
  env: Env,
  cfg: Config,
  notificationIds: string[],
  pre: { recipients?: readonly { id: string; account_id: string }[]; rows?: readonly RecipientRow[] } = {},
): Promise<void> {
  if (!notificationIds.length) return;
  const byRecipient = new Map<string, string[]>();
  const rowsOf = new Map<string, RecipientRow[]>();
  if (pre.rows) {
    const order = new Map(notificationIds.map((id, i) => [id, i]));
    for (const r of [...pre.rows].sort((x, y) => (order.get(x.n.id) ?? 0) - (order.get(y.n.id) ?? 0))) {
      entry(rowsOf, r.n.accountId, () => []).push(r);
      entry(byRecipient, r.n.accountId, () => []).push(r.n.id);
    }
  } else {
    for (const r of pre.recipients ?? (await notificationRecipientsStatement(db, notificationIds))) {
      entry(byRecipient, unpadId(String(r.account_id)), () => []).push(unpadId(String(r.id)));
    }
  }
  if (!byRecipient.size) return;
  await publishPlanned(env, async ({ online }) => {
    const routed: Routed[] = [];
    const queue = [...byRecipient.keys()].filter((a) => online.has(a));
    const renderOne = async () => {
      for (let recipient = queue.shift(); recipient !== undefined; recipient = queue.shift()) {
        const read = rowsOf.get(recipient);
        const found = read ? await withReportTargets(db, read) : await findNotifications(db, recipient, byRecipient.get(recipient) ?? []);
        const rendered = await renderNotifications(db, cfg, found, recipient);
        for (const n of rendered) {
          routed.push({
            envelope: { kind: "raw", event: "notification", payload: JSON.stringify(n) },
            accounts: [{ id: recipient, keys: ["user", "user:notification"] }],
          });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(6, queue.length) }, renderOne));
    return routed;
  });
}

function encodePayload(payload: unknown): string | undefined {
  if (payload === undefined || payload === null) return undefined;
  return typeof payload === "string" ? payload : JSON.stringify(payload);
}

/** Where Mastodon publishes an account event: conversation on `direct`, notifications_merged on the notification streams. */
function keysFor(event: AccountEvent): string[] {
  if (event === "conversation") return ["direct"];
  if (event === "notification" || event === "notifications_merged") return ["user", "user:notification"];
  return ["user"];
}

/**
 * An event for one account's streams, as given: filters_changed (no payload; the hub also reloads the account's
 * filters), conversation (a Conversation rendered for the account), announcement, announcement.reaction,
 * announcement.delete (the id), notifications_merged. An object payload is JSON-encoded.
 */
export async function publishToAccount(env: Env, accountId: string, event: AccountEvent, payload?: unknown): Promise<void> {
  await routerStub(env).routerPublish([
    { envelope: { kind: "raw", event, payload: encodePayload(payload) }, accounts: [{ id: accountId, keys: keysFor(event) }] },
  ]);
}

/** An event for every connected account's `user` stream (announcement, announcement.delete ...). */
export async function publishToAllUsers(env: Env, event: AccountEvent, payload?: unknown): Promise<void> {
  await routerStub(env).routerPublish([{ envelope: { kind: "raw", event, payload: encodePayload(payload) }, allUsers: keysFor(event) }]);
}

/**
 * An announcement event for every connected user (Mastodon renders it once, for no account): `announcement` with the
 * published announcement, `announcement.reaction` with the name's new count, `announcement.delete` with the id.
 */
export async function publishAnnouncementEvent(
  db: DB,
  env: Env,
  cfg: Config,
  e: { event: "announcement" | "announcement.reaction" | "announcement.delete"; announcementId: string; name?: string },
): Promise<void> {
  if (e.event === "announcement.delete") return publishToAllUsers(env, e.event, e.announcementId);
  if (e.event === "announcement.reaction") return publishToAllUsers(env, e.event, await renderReactionEvent(db, cfg, e.announcementId, e.name ?? ""));
  const rows = await db.select().from(announcements).where(eq(announcements.id, e.announcementId)).limit(1);
  if (!rows[0]?.published) return;
  const [rendered] = await renderAnnouncements(db, cfg, rows, null);
  if (rendered) await publishToAllUsers(env, "announcement", rendered);
}

/**
 * The blocks, mutes or domain blocks of these accounts changed: their hubs drop what they cached (no client event).
 * Without this, a cached relation heals within viewer-state.ts CACHE_MS.
 */
export async function publishRelationsChanged(env: Env, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  await routerStub(env).routerPublish([{ envelope: { kind: "relations" }, accounts: accountIds.map((id) => ({ id, keys: [] })) }]);
}

/**
 * Closes an account's streaming connections at once: those of one token (revoked), or all (login disabled, account
 * suspended, application deleted). Hubs also re-check their tokens every few minutes (hub.ts TOKEN_CHECK_MS).
 */
export async function disconnectStreams(env: Env, accountId: string, tokenId: string | null = null): Promise<void> {
  await hubStub(env, userHub(accountId)).kill(tokenId);
}
