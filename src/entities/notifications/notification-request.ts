// NotificationRequest → Mastodon JSON ({id, created_at, updated_at, notifications_count (a string), account,
// last_status}). The page's last statuses are rendered in one renderStatuses batch; one the viewer can no longer see
// is null.
import type { DB } from "../../db/client";
import type { Config } from "../../env";
import type { RequestWithAccount } from "../../queries/notifications/notification-requests";
import { MAX_MEANINGFUL_COUNT } from "./notification-policy";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import { renderStatuses, type MastodonStatus } from "../statuses/status";
import { isoTime } from "../urls";

/** NotificationRequest (docs.joinmastodon.org/entities/NotificationRequest). */
export interface MastodonNotificationRequest {
  id: string;
  created_at: string;
  updated_at: string;
  /** A string, as Mastodon renders it. */
  notifications_count: string;
  account: MastodonAccount;
  last_status: MastodonStatus | null;
}

export async function renderNotificationRequests(db: DB, cfg: Config, rows: RequestWithAccount[], viewerId: string): Promise<MastodonNotificationRequest[]> {
  const ids = [...new Set(rows.map((r) => r.request.lastStatusId).filter((x): x is string => !!x))];
  const statuses = ids.length ? await renderStatuses(db, cfg, ids, viewerId) : [];
  const byId = new Map(statuses.map((s) => [s.id, s]));
  return rows.map(({ request, from }) => ({
    id: request.id,
    created_at: isoTime(request.createdAt),
    updated_at: isoTime(request.updatedAt),
    notifications_count: String(Math.min(Math.max(request.notificationsCount, 0), MAX_MEANINGFUL_COUNT)),
    account: renderAccount(cfg, from),
    last_status: (request.lastStatusId && byId.get(request.lastStatusId)) || null,
  }));
}
