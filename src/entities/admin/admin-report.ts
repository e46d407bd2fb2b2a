// Admin::Report (REST::Admin::ReportSerializer): the report with the reporter, the reported account, the assignee and
// who resolved it as Admin::Account, the reported statuses as Status and the broken rules as Rule. A page renders in
// two D1 round trips whatever its size: the accounts and rules in one batch, then the statuses' bundle.
import { inArray } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { accounts, rules, userRoles, users } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAdminAccount, type MastodonAdminAccount } from "./admin-account";
import { renderRule, type MastodonRule } from "../instance/instance";
import { reportFields, type MastodonReportFields } from "../accounts/report";
import { loadStatusBundle, renderStatusFrom, type MastodonStatus, type StatusBundle } from "../statuses/status";
import { isoTime } from "../urls";
import { accountRows } from "../../db/table-rows";
import type { AdminAccountRow, ReportRow } from "../../db/schema/index";

/** Admin::Report: the accounts are Admin::Account (null when the account is gone). */
export interface MastodonAdminReport extends MastodonReportFields {
  updated_at: string;
  account: MastodonAdminAccount | null;
  target_account: MastodonAdminAccount | null;
  assigned_account: MastodonAdminAccount | null;
  action_taken_by_account: MastodonAdminAccount | null;
  statuses: MastodonStatus[];
  rules: MastodonRule[];
}

export async function renderAdminReports(db: DB, cfg: Config, list: ReportRow[]): Promise<MastodonAdminReport[]> {
  if (!list.length) return [];
  const accountIds = new Set<string>();
  for (const r of list) {
    for (const id of [r.accountId, r.targetAccountId, r.assignedAccountId, r.actionTakenByAccountId]) if (id) accountIds.add(id);
  }
  const ruleIds = [...new Set(list.flatMap((r) => r.ruleIds))];
  const statusIds = [...new Set(list.flatMap((r) => r.statusIds))];
  // Separate selects, not a join: D1 batches return rows keyed by column name, where joined tables' `id`s collide.
  const ids = idList([...accountIds]);
  const [accountList, userRows, roleRows, ruleRows] = await db.batch([
    accountRows(db, { where: inArray(accounts.id, ids) }),
    db.select().from(users).where(inArray(users.accountId, ids)),
    db.select().from(userRoles),
    db
      .select()
      .from(rules)
      .where(inArray(rules.id, idList(ruleIds))),
  ]);
  const userOf = new Map(userRows.map((u) => [u.accountId, u]));
  const roleOf = new Map(roleRows.map((r) => [r.id, r]));
  const byId = new Map<string, AdminAccountRow>(
    accountList.map((account) => {
      const user = userOf.get(account.id) ?? null;
      return [account.id, { account, user, role: (user?.roleId && roleOf.get(user.roleId)) || null }];
    }),
  );
  const ruleById = new Map(ruleRows.map((r) => [r.id, r]));
  const statuses = await renderReportedStatuses(db, cfg, statusIds);
  const account = (id: string | null) => {
    const row = id ? byId.get(id) : undefined;
    return row ? renderAdminAccount(cfg, row) : null;
  };
  return list.map((r) => ({
    ...reportFields(r),
    updated_at: isoTime(r.updatedAt),
    account: account(r.accountId),
    target_account: account(r.targetAccountId),
    assigned_account: account(r.assignedAccountId),
    action_taken_by_account: account(r.actionTakenByAccountId),
    statuses: r.statusIds.map((id) => statuses.get(id)).filter((s) => !!s),
    rules: r.ruleIds.flatMap((id) => {
      const rule = ruleById.get(id);
      return rule ? [renderRule(rule)] : [];
    }),
  }));
}

/**
 * Staff see every reported status whatever its visibility and whether its author is suspended (Mastodon's admin
 * serializer does not apply the visibility policy): each status is rendered as its author would see it, from a view of
 * the loaded bundle whose authors are not suspended (the bundle itself is not changed); the viewer flags are left at
 * their defaults.
 */
async function renderReportedStatuses(db: DB, cfg: Config, ids: string[]): Promise<Map<string, MastodonStatus>> {
  const out = new Map<string, MastodonStatus>();
  if (!ids.length) return out;
  const loaded = await loadStatusBundle(db, ids, null);
  const accounts = new Map([...loaded.accounts].map(([id, a]) => [id, a.suspendedAt ? { ...a, suspendedAt: null } : a]));
  for (const id of ids) {
    const s = loaded.statuses.get(id);
    if (!s) continue;
    const asAuthor: StatusBundle = { ...loaded, accounts, viewer: { ...loaded.viewer, id: s.accountId } };
    const rendered = renderStatusFrom(cfg, asAuthor, id);
    if (rendered) out.set(id, rendered);
  }
  return out;
}
