// Staff notices by mail (Mastodon's AdminMailer: new_report, new_pending_account, new_trends): one `mail` effect for
// each staff member whose role may act on the notice and who has not turned its mails off on the preferences page
// (Mastodon's notification_emails.report, .pending_account and .trends, on by default). One mail per recipient, so a
// failed send is retried for that recipient alone.
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import type { Effects } from "../effects/collector";
import type { MailJob, StaffNotice } from "../effects/types";
import { hasPermission, type Permission } from "../lib/security/permissions";
import { unpadId } from "../lib/text/ids";

const RULES: Record<StaffNotice["kind"], { permission: Permission; setting: string }> = {
  report: { permission: "manage_reports", setting: "notification_emails:report" },
  pending_account: { permission: "manage_users", setting: "notification_emails:pending_account" },
  trends: { permission: "manage_taxonomies", setting: "notification_emails:trends" },
};

/** Records the notice's mails on `fx`; returns how many. */
export async function mailStaff(db: DB, fx: Effects, origin: string, notice: StaffNotice): Promise<number> {
  const rule = RULES[notice.kind];
  const staff = await db.all<{ id: string; account_id: string; permissions: number; wants: number | null }>(
    sql`SELECT u.id AS id, u.account_id AS account_id, r.permissions AS permissions,
        json_extract(u.settings, ${`$."${rule.setting}"`}) AS wants
      FROM users u JOIN user_roles r ON r.id = u.role_id
      WHERE u.disabled = 0 AND u.confirmed_at IS NOT NULL AND r.permissions <> 0`,
  );
  let n = 0;
  for (const s of staff) {
    if (!hasPermission(s.permissions, rule.permission) || s.wants === 0) continue;
    const userId = unpadId(s.id);
    const accountId = unpadId(s.account_id);
    let mail: MailJob;
    if (notice.kind === "report") mail = { kind: "admin_report", userId, reportId: notice.reportId };
    else if (notice.kind === "pending_account") {
      if (notice.accountId === accountId) continue;
      mail = { kind: "admin_pending_account", userId, accountId: notice.accountId };
    } else mail = { kind: "admin_trends", userId, tags: notice.tags, statuses: notice.statuses, links: notice.links };
    fx.add({ type: "mail", origin, mail });
    n++;
  }
  return n;
}
