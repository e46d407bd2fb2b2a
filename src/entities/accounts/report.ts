// Mastodon's Report entity: the fields every rendering shares, and the reporter's answer to POST /api/v1/reports
// (renderFiledReport). The report in an admin.report notification (./notification.ts) and staff's Admin::Report
// (./admin-report.ts) add their own around the shared fields.
import { isoTime } from "../urls";
import type { AccountRow, ReportRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { renderAccount, type MastodonAccount } from "./account";

/** reports.category holds one of these (the report routes validate it). */
export type MastodonReportCategory = "spam" | "legal" | "violation" | "other";

/** The fields of Report (docs.joinmastodon.org/entities/Report) that every rendering of a report shares. */
export interface MastodonReportFields {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: MastodonReportCategory;
  comment: string;
  forwarded: boolean;
  created_at: string;
}

/** Report as its reporter and an admin.report notification see it. */
export interface MastodonReport extends MastodonReportFields {
  status_ids: string[] | null;
  /** Mastodon 4.6: the reported account's collections the report names. */
  collection_ids: string[] | null;
  rule_ids: string[] | null;
  target_account: MastodonAccount | null;
}

export function reportFields(r: ReportRow): MastodonReportFields {
  return {
    id: r.id,
    action_taken: r.actionTakenAt != null,
    action_taken_at: isoTime(r.actionTakenAt),
    category: r.category as MastodonReportCategory,
    comment: r.comment,
    forwarded: r.forward,
    created_at: isoTime(r.createdAt),
  };
}

/** Report as POST /api/v1/reports answers its reporter: the ids as filed (none is an empty list, not null). */
export function renderFiledReport(cfg: Config, r: ReportRow, target: AccountRow): MastodonReport {
  return { ...reportFields(r), status_ids: r.statusIds, collection_ids: r.collectionIds, rule_ids: r.ruleIds, target_account: renderAccount(cfg, target) };
}
