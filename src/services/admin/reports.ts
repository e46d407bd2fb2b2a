// Staff handling of reports (Mastodon's Api::V1::Admin::ReportsController, ReportFilter and Report#resolve!/
// unresolve!): the list with its filters, one report, changing category and rules, assigning, resolving, reopening.
// Every change and its admin_action_logs row are written in one batch.
import { and, eq, inArray, isNotNull, isNull, type SQL } from "drizzle-orm";
import type { DB } from "../../db/client";
import { idList } from "../../db/client";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { reports, rules } from "../../db/schema";
import { notFound, validationFailed } from "../../lib/http/errors";
import type { Page } from "../../lib/http/pagination";
import { logStatement, type Moderator } from "./accounts";
import { REPORT_CATEGORIES, type ReportCategory } from "../relationships/reports";
import type { ReportRow } from "../../db/schema";

export interface AdminReportFilter {
  /** Mastodon's ReportFilter: resolved reports when given, else open ones. */
  resolved: boolean;
  accountId?: string;
  targetAccountId?: string;
}

/** One page of reports, newest first, cursored by report id. */
export async function adminReportsPage(db: DB, f: AdminReportFilter, page: Page): Promise<ReportRow[]> {
  const conds: (SQL | undefined)[] = [f.resolved ? isNotNull(reports.actionTakenAt) : isNull(reports.actionTakenAt), cursorWhere(reports.id, page)];
  if (f.accountId) conds.push(eq(reports.accountId, f.accountId));
  if (f.targetAccountId) conds.push(eq(reports.targetAccountId, f.targetAccountId));
  const rows = await db
    .select()
    .from(reports)
    .where(and(...conds))
    .orderBy(cursorOrder(reports.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}

export async function getReport(db: DB, id: string): Promise<ReportRow> {
  const [row] = await db.select().from(reports).where(eq(reports.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

/** Writes `changes` to the report and the log row in one batch; returns the report as it now is. */
async function change(db: DB, actor: Moderator, id: string, action: string, changes: Partial<ReportRow>): Promise<ReportRow> {
  const report = await getReport(db, id);
  const now = Date.now();
  const next = { ...changes, updatedAt: now };
  await db.batch([db.update(reports).set(next).where(eq(reports.id, id)), logStatement(db, actor, action, "Report", id, now)]);
  return { ...report, ...next };
}

export interface ReportUpdate {
  category?: string;
  ruleIds?: string[];
}

/** PUT /api/v1/admin/reports/:id: category and rules (rules only mean something for a violation, as on creation). */
export async function updateReport(db: DB, actor: Moderator, id: string, input: ReportUpdate): Promise<ReportRow> {
  const report = await getReport(db, id);
  if (input.category !== undefined && !(REPORT_CATEGORIES as readonly string[]).includes(input.category)) {
    throw validationFailed("Category is not included in the list");
  }
  const category = (input.category ?? report.category) as ReportCategory;
  let ruleIds = input.ruleIds ? [...new Set(input.ruleIds)] : report.ruleIds;
  if (category === "violation") {
    if (!ruleIds.length) throw validationFailed("Rule ids can't be blank for a violation report");
    const found = await db
      .select({ id: rules.id })
      .from(rules)
      .where(inArray(rules.id, idList(ruleIds)));
    if (found.length !== ruleIds.length) throw validationFailed("Rule ids contain rules that do not exist");
  } else ruleIds = [];
  return change(db, actor, id, "update", { category, ruleIds });
}

export const assignReportToSelf = (db: DB, actor: Moderator, id: string) => change(db, actor, id, "assigned_to_self", { assignedAccountId: actor.accountId });

export const unassignReport = (db: DB, actor: Moderator, id: string) => change(db, actor, id, "unassigned", { assignedAccountId: null });

/** Report#resolve!: marks it handled by `actor` now (again if it already was, as Mastodon does). */
export const resolveReport = (db: DB, actor: Moderator, id: string) =>
  change(db, actor, id, "resolve", { actionTakenAt: Date.now(), actionTakenByAccountId: actor.accountId });

/** Report#unresolve!: open again, without who resolved it. */
export const reopenReport = (db: DB, actor: Moderator, id: string) => change(db, actor, id, "reopen", { actionTakenAt: null, actionTakenByAccountId: null });
