// Notification rows → Mastodon Notification JSON. The page's statuses are rendered in ONE renderStatuses batch;
// a notification whose status the viewer can no longer see (deleted, now private, author suspended) is left out,
// as Mastodon does. Accounts come joined with the page query, so they cost nothing here.
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import { relatedOfRows, type NotificationWithRefs } from "../../queries/notifications/notifications";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import { reportFields, type MastodonReport } from "../accounts/report";
import { renderStatuses, type MastodonStatus } from "../statuses/status";
import { isoTime } from "../urls";
import { type MastodonCollection, notificationCollections } from "../accounts/collection";
import { accountsByIds } from "../../queries/accounts/accounts";
import type { NotificationType } from "../../db/schema/index";

/** The types whose notification (and notification group) names a status (the serializer's status_type?). */
export const STATUS_NOTIFICATION_TYPES = ["favourite", "reblog", "status", "mention", "poll", "update", "quote", "quoted_update"] as const;
export type StatusNotificationType = (typeof STATUS_NOTIFICATION_TYPES)[number];
const STATUS_TYPES: ReadonlySet<NotificationType> = new Set(STATUS_NOTIFICATION_TYPES);
export const isStatusNotificationType = (t: NotificationType): t is StatusNotificationType => STATUS_TYPES.has(t);

interface NotificationFields<T extends NotificationType> {
  id: string;
  type: T;
  created_at: string;
  group_key: string;
  account: MastodonAccount;
}

/**
 * Notification (docs.joinmastodon.org/entities/Notification): `status` for the types about a status, `report` for
 * admin.report, `target` (the account moved to) for move (Pleroma's shape; Mastodon has no such type).
 */
export type MastodonNotification =
  | (NotificationFields<StatusNotificationType> & { status: MastodonStatus })
  | (NotificationFields<"admin.report"> & { report: MastodonReport })
  | (NotificationFields<"move"> & { target: MastodonAccount })
  | (NotificationFields<"added_to_collection" | "collection_update"> & { collection: MastodonCollection })
  | NotificationFields<Exclude<NotificationType, StatusNotificationType | "admin.report" | "move" | "added_to_collection" | "collection_update">>;

export function renderReport(cfg: Config, r: NonNullable<NotificationWithRefs["report"]>, target: NotificationWithRefs["reportTarget"]): MastodonReport {
  return {
    ...reportFields(r),
    status_ids: r.statusIds.length ? r.statusIds : null,
    collection_ids: r.collectionIds.length ? r.collectionIds : null,
    rule_ids: r.ruleIds.length ? r.ruleIds : null,
    target_account: target ? renderAccount(cfg, target) : null,
  };
}

export async function renderNotifications(db: DB, cfg: Config, rows: NotificationWithRefs[], viewerId: string): Promise<MastodonNotification[]> {
  const statusIds = [...new Set(rows.map((r) => r.n.statusId).filter((x): x is string => !!x))];
  const rendered = await renderStatuses(db, cfg, statusIds, viewerId, "notifications", relatedOfRows(rows));
  const byId = new Map(rendered.map((s) => [s.id, s]));
  // `move` (an account the recipient follows moved): its new account as `target` (Pleroma's shape), one query.
  const movedIds = [...new Set(rows.flatMap((r) => (r.n.type === "move" && r.from.movedToAccountId ? [r.from.movedToAccountId] : [])))];
  const moved = new Map((await accountsByIds(db, movedIds)).map((a) => [a.id, a]));
  const collections = await notificationCollections(db, cfg, rows, viewerId);
  const out: MastodonNotification[] = [];
  for (const { n, from, report, reportTarget } of rows) {
    const item: NotificationFields<NotificationType> & {
      status?: MastodonStatus;
      target?: MastodonAccount;
      report?: MastodonReport;
      collection?: MastodonCollection;
    } = {
      id: n.id,
      type: n.type,
      created_at: isoTime(n.createdAt),
      group_key: n.groupKey ?? `ungrouped-${n.id}`,
      account: renderAccount(cfg, from),
    };
    if (n.statusId) {
      const s = byId.get(n.statusId);
      if (!s) continue;
      item.status = s;
    }
    if (n.type === "move") {
      const target = from.movedToAccountId ? moved.get(from.movedToAccountId) : undefined;
      if (!target) continue;
      item.target = renderAccount(cfg, target);
    }
    if (n.type === "admin.report") {
      if (!report) continue;
      item.report = renderReport(cfg, report, reportTarget);
    }
    if (n.type === "added_to_collection" || n.type === "collection_update") {
      const c = n.collectionId ? collections.get(n.collectionId) : undefined;
      if (!c) continue;
      item.collection = c;
    }
    // Notifications are written so: a status exactly for the types about one, a report for admin.report, a move's target.
    out.push(item as MastodonNotification);
  }
  return out;
}
