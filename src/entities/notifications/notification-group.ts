// Grouped notifications → Mastodon JSON (REST::DedupNotificationGroupSerializer): {accounts, partial_accounts?,
// statuses, notification_groups}. Each group names its accounts and status by id; the accounts and statuses come once
// each in the top-level lists. The page's statuses are rendered in ONE renderStatuses batch in the notifications
// filter context: a group whose status the viewer can no longer see, or that a `hide` filter matches, is left out.
import type { DB } from "../../db/client";
import type { AccountRow, NotificationType } from "../../db/schema/index";
import type { Config } from "../../env";
import type { GroupedPage } from "../../queries/notifications/notification-groups";
import { relatedOfRows } from "../../queries/notifications/notifications";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import { isStatusNotificationType, renderReport, type StatusNotificationType } from "./notification";
import type { MastodonReport } from "../accounts/report";
import { type MastodonCollection, notificationCollections } from "../accounts/collection";
import { renderStatuses, type MastodonStatus } from "../statuses/status";
import { isoTime } from "../urls";

export type ExpandAccounts = "full" | "partial_avatars";

/** PartialAccountWithAvatar: what `partial_accounts` holds of an account. */
export type MastodonPartialAccount = Pick<MastodonAccount, "id" | "acct" | "locked" | "bot" | "url" | "avatar" | "avatar_static">;

interface NotificationGroupFields<T extends NotificationType> {
  group_key: string;
  notifications_count: number;
  type: T;
  most_recent_notification_id: string;
  /** The page fields: only on a paginated request. */
  page_min_id?: string;
  page_max_id?: string;
  latest_page_notification_at?: string;
  sample_account_ids: string[];
}

/** NotificationGroup: `status_id` for the types about a status, `report` for admin.report. */
export type MastodonNotificationGroup =
  | (NotificationGroupFields<StatusNotificationType> & { status_id: string })
  | (NotificationGroupFields<"admin.report"> & { report: MastodonReport })
  | (NotificationGroupFields<"added_to_collection" | "collection_update"> & { collection: MastodonCollection })
  | NotificationGroupFields<Exclude<NotificationType, StatusNotificationType | "admin.report" | "added_to_collection" | "collection_update">>;

/** GroupedNotificationsResults (GET /api/v2/notifications). */
export interface MastodonGroupedNotifications {
  accounts: MastodonAccount[];
  partial_accounts?: MastodonPartialAccount[];
  statuses: MastodonStatus[];
  notification_groups: MastodonNotificationGroup[];
}

/** The stripped-down account of `partial_accounts` (DedupNotificationGroupSerializer::PartialAccountSerializer). */
function renderPartialAccount(cfg: Config, a: AccountRow): MastodonPartialAccount {
  const full = renderAccount(cfg, a);
  return { id: full.id, acct: full.acct, locked: full.locked, bot: full.bot, url: full.url, avatar: full.avatar, avatar_static: full.avatar_static };
}

export async function renderGroupedNotifications(
  db: DB,
  cfg: Config,
  page: GroupedPage,
  viewerId: string,
  expand: ExpandAccounts = "full",
): Promise<MastodonGroupedNotifications> {
  const statusIds = [...new Set(page.rows.map((r) => r.n.statusId).filter((x): x is string => !!x))];
  const rendered = statusIds.length ? await renderStatuses(db, cfg, statusIds, viewerId, "notifications", relatedOfRows(page.rows)) : [];
  const statusById = new Map(rendered.map((s) => [s.id, s]));
  const collections = await notificationCollections(db, cfg, page.rows, viewerId);

  const groups: MastodonNotificationGroup[] = [];
  const statuses = new Map<string, MastodonStatus>();
  const full: string[] = [];
  const partial: string[] = [];
  const note = (list: string[], id: string) => {
    if (!list.includes(id)) list.push(id);
  };
  for (const { n, from, report, reportTarget, key } of page.rows) {
    const data = page.groups.get(key);
    const grouped = !key.startsWith("ungrouped-");
    if (grouped && !data) continue; // every member went between the two queries
    const sampleIds = (grouped ? data!.sampleIds : [from.id]).filter((id) => page.accounts.has(id));
    const latest = sampleIds[0];
    if (latest === undefined) continue;
    const mostRecent = grouped ? data!.mostRecentId : n.id;
    const fields = <T extends NotificationType>(type: T): NotificationGroupFields<T> => ({
      group_key: key,
      notifications_count: grouped ? data!.count : 1,
      type,
      most_recent_notification_id: mostRecent,
      ...(page.paginated
        ? {
            page_min_id: grouped ? data!.pageMinId : n.id,
            page_max_id: mostRecent,
            // GroupData has pageMinId and latestAt when the page is paginated.
            latest_page_notification_at: isoTime(grouped ? data!.latestAt! : n.createdAt),
          }
        : {}),
      sample_account_ids: sampleIds,
    });
    const type = n.type;
    if (isStatusNotificationType(type)) {
      const s = n.statusId ? statusById.get(n.statusId) : undefined;
      if (!s) continue;
      groups.push({ ...fields(type), status_id: s.id });
      statuses.set(s.id, s);
    } else if (type === "admin.report") {
      if (!report) continue;
      groups.push({ ...fields(type), report: renderReport(cfg, report, reportTarget) });
    } else if (type === "added_to_collection" || type === "collection_update") {
      const c = n.collectionId ? collections.get(n.collectionId) : undefined;
      if (!c) continue;
      groups.push({ ...fields(type), collection: c });
    } else groups.push(fields(type));
    // Mastodon's GroupedNotificationsPresenter: with partial_avatars only each group's most recent account is
    // rendered in full; the others come as partial accounts.
    note(full, latest);
    for (const id of sampleIds.slice(1)) note(expand === "full" ? full : partial, id);
  }
  const accounts = full.map((id) => renderAccount(cfg, page.accounts.get(id)!));
  if (expand !== "partial_avatars") return { accounts, statuses: [...statuses.values()], notification_groups: groups };
  const partialAccounts = partial.filter((id) => !full.includes(id)).map((id) => renderPartialAccount(cfg, page.accounts.get(id)!));
  return { accounts, partial_accounts: partialAccounts, statuses: [...statuses.values()], notification_groups: groups };
}
