// Reports by users (POST /api/v1/reports). The report and the staff notifications are written in one batch.
// Reported statuses must be ones the reporter can see (else 404, security B15) and belong to the reported account;
// reported collections (Mastodon 4.6) must exist and belong to it too.
import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { accounts, collections, reports, rules, statuses, userRoles, users } from "../../db/schema";
import { notFound, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { hasPermission } from "../../lib/security/permissions";
import type { AccountRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { notificationWrites } from "../notifications/notifications";
import { statusReadableBy } from "../../policy/visibility";
import { accountRows } from "../../db/table-rows";
import type { ReportRow } from "../../db/schema";

export const REPORT_CATEGORIES = ["spam", "legal", "violation", "other"] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];
export const MAX_REPORT_COMMENT = 1000;

export interface NewReport {
  targetAccountId: string;
  statusIds: string[];
  ruleIds: string[];
  /** Collections of the reported account (Mastodon 4.6). */
  collectionIds?: string[];
  comment: string;
  category?: ReportCategory;
  forward: boolean;
}

export async function createReport(db: DB, fx: Effects, reporterId: string, input: NewReport): Promise<{ report: ReportRow; target: AccountRow }> {
  if (Array.from(input.comment).length > MAX_REPORT_COMMENT) {
    throw validationFailed(`Comment is too long (maximum is ${MAX_REPORT_COMMENT} characters)`);
  }
  if (input.targetAccountId === reporterId) throw validationFailed("You cannot report yourself");
  const statusIds = [...new Set(input.statusIds)];
  const ruleIds = [...new Set(input.ruleIds)];
  const collectionIds = [...new Set(input.collectionIds ?? [])];
  const [target, seen, ruleRows, staff, named] = await db.batch([
    accountRows(db, { where: eq(accounts.id, input.targetAccountId), limit: 1 }),
    db
      .select({ id: statuses.id, accountId: statuses.accountId })
      .from(statuses)
      .where(and(inArray(statuses.id, idList(statusIds)), statusReadableBy(reporterId))),
    db
      .select({ id: rules.id })
      .from(rules)
      .where(inArray(rules.id, idList(ruleIds))),
    db
      .select({ accountId: users.accountId, permissions: userRoles.permissions })
      .from(users)
      .innerJoin(userRoles, eq(userRoles.id, users.roleId))
      .where(and(isNotNull(users.roleId), eq(users.disabled, false), sql`${userRoles.permissions} <> 0`)),
    db
      .select({ id: collections.id, accountId: collections.accountId })
      .from(collections)
      .where(inArray(collections.id, idList(collectionIds))),
  ]);
  if (!target[0]) throw notFound();
  if (seen.length !== statusIds.length) throw notFound();
  if (seen.some((s) => s.accountId !== input.targetAccountId)) throw validationFailed("Statuses must belong to the reported account");
  if (named.length !== collectionIds.length) throw notFound();
  if (named.some((c) => c.accountId !== input.targetAccountId)) throw validationFailed("Collections must belong to the reported account");

  // Rules only mean something for a violation; naming rules without a category implies one (Mastodon).
  const category: ReportCategory = input.category ?? (ruleIds.length ? "violation" : "other");
  if (category === "violation") {
    if (!ruleIds.length) throw validationFailed("Rule ids can't be blank for a violation report");
    if (ruleRows.length !== ruleIds.length) throw validationFailed("Rule ids contain rules that do not exist");
  }
  const now = Date.now();
  const report: ReportRow = {
    id: snowflake(now),
    accountId: reporterId,
    targetAccountId: input.targetAccountId,
    statusIds,
    ruleIds: category === "violation" ? ruleIds : [],
    collectionIds,
    comment: input.comment,
    category,
    forward: input.forward && !!target[0].domain,
    actionTakenAt: null,
    assignedAccountId: null,
    actionTakenByAccountId: null,
    uri: null,
    createdAt: now,
    updatedAt: now,
  };
  const moderators = staff.filter((s) => hasPermission(s.permissions, "manage_reports") && s.accountId !== input.targetAccountId);
  const notes = notificationWrites(
    db,
    moderators.map((m) => ({ recipientId: m.accountId, fromAccountId: reporterId, type: "admin.report" as const, reportId: report.id, activityId: report.id })),
  );
  await commit(db, fx, [db.insert(reports).values(report), ...notes.stmts], (fx) => {
    fx.add(...notes.notify);
    // Mastodon's AdminMailer#new_report, to staff who want it (src/mail/staff-notices.ts).
    fx.add({ type: "mail_staff", origin: fx.origin, notice: { kind: "report", reportId: report.id } });
    // forward=true sends a Flag to the reported account's server (the reporter's identity stays here).
    if (report.forward) fx.federate({ kind: "flag", reportId: report.id });
  });
  return { report, target: target[0] };
}
