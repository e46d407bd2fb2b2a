// Grouped notifications → Mastodon JSON (REST::DedupNotificationGroupSerializer): {accounts, partial_accounts?,
// statuses, notification_groups}. Each group names its accounts and status by id; the accounts and statuses come once
// each in the top-level lists. The page's statuses are rendered in ONE renderStatuses batch in the notifications
// filter context: a group whose status the viewer can no longer see, or that a `hide` filter matches, is left out.
import type { DB } from "../db/client";
import type { AccountRow } from "../db/schema";
import type { Config } from "../env";
import type { GroupedPage } from "../queries/notification-groups";
import { relatedOfRows } from "../queries/notifications";
import { renderAccount } from "./account";
import { renderReport } from "./notification";
import { renderStatuses } from "./status";
import { isoTime } from "./urls";

export type ExpandAccounts = "full" | "partial_avatars";

/** Types whose group names a status (the serializer's status_type?). */
const STATUS_TYPES = new Set(["favourite", "reblog", "status", "mention", "poll", "update", "quote", "quoted_update"]);

/** The stripped-down account of `partial_accounts` (DedupNotificationGroupSerializer::PartialAccountSerializer). */
function renderPartialAccount(cfg: Config, a: AccountRow) {
  const full = renderAccount(cfg, a);
  return { id: full.id, acct: full.acct, locked: full.locked, bot: full.bot, url: full.url, avatar: full.avatar, avatar_static: full.avatar_static };
}

export async function renderGroupedNotifications(
  db: DB,
  cfg: Config,
  page: GroupedPage,
  viewerId: string,
  expand: ExpandAccounts = "full",
): Promise<Record<string, unknown>> {
  const statusIds = [...new Set(page.rows.map((r) => r.n.statusId).filter((x): x is string => !!x))];
  const rendered = statusIds.length ? await renderStatuses(db, cfg, statusIds, viewerId, "notifications", relatedOfRows(page.rows)) : [];
  const statusById = new Map(rendered.map((s) => [s.id as string, s]));

  const groups: Record<string, unknown>[] = [];
  const statuses = new Map<string, Record<string, unknown>>();
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
    const g: Record<string, unknown> = {
      group_key: key,
      notifications_count: grouped ? data!.count : 1,
      type: n.type,
      most_recent_notification_id: grouped ? data!.mostRecentId : n.id,
    };
    if (page.paginated) {
      g.page_min_id = grouped ? data!.pageMinId : n.id;
      g.page_max_id = g.most_recent_notification_id;
      g.latest_page_notification_at = isoTime(grouped ? data!.latestAt : n.createdAt);
    }
    g.sample_account_ids = sampleIds;
    if (STATUS_TYPES.has(n.type)) {
      const s = n.statusId ? statusById.get(n.statusId) : undefined;
      if (!s) continue;
      g.status_id = s.id;
      statuses.set(s.id as string, s);
    }
    if (n.type === "admin.report") {
      if (!report) continue;
      g.report = renderReport(cfg, report, reportTarget);
    }
    groups.push(g);
    // Mastodon's GroupedNotificationsPresenter: with partial_avatars only each group's most recent account is
    // rendered in full; the others come as partial accounts.
    note(full, latest);
    for (const id of sampleIds.slice(1)) note(expand === "full" ? full : partial, id);
  }
  const out: Record<string, unknown> = {
    accounts: full.map((id) => renderAccount(cfg, page.accounts.get(id)!)),
  };
  if (expand === "partial_avatars") {
    out.partial_accounts = partial.filter((id) => !full.includes(id)).map((id) => renderPartialAccount(cfg, page.accounts.get(id)!));
  }
  out.statuses = [...statuses.values()];
  out.notification_groups = groups;
  return out;
}
