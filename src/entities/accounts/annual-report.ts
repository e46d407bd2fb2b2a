// AnnualReport and the wrapper Mastodon answers its annual report endpoints with (REST::AnnualReportsSerializer): the
// reports, the accounts they name (schema 2: the report's owner) and the statuses they name (the top posts), rendered
// for the viewer in one batch.
import type { DB } from "../../db/client";
import type { AnnualReportRow, RenderAccountRow, RoleRow } from "../../db/schema/index";
import type { Config } from "../../env";
import { type MastodonStatus, renderStatuses } from "../statuses/status";
import { type MastodonAccount, renderAccount } from "./account";

export type Archetype = "lurker" | "booster" | "pollster" | "replier" | "oracle";

/** A report's `data` (schema version 2, with schema 1's percentiles and type distribution). */
export interface AnnualReportData {
  archetype: Archetype;
  /** Per month of the year: posts written, accounts followed, new followers. */
  time_series: { month: number; statuses: number; following: number; followers: number }[];
  top_hashtags: { name: string; count: number }[];
  top_statuses: { by_reblogs: string | null; by_favourites: string | null; by_replies: string | null };
  percentiles: { followers: number; statuses: number };
  type_distribution: { total: number; reblogs: number; replies: number; standalone: number };
}

/** The posts a report names (its top statuses), to render with it. */
export function reportStatusIds(data: AnnualReportData): string[] {
  const t = data.top_statuses;
  return [t.by_reblogs, t.by_favourites, t.by_replies].filter((x): x is string => !!x);
}

export interface MastodonAnnualReport {
  year: number;
  data: AnnualReportData;
  schema_version: number;
  share_url: string | null;
  account_id: string;
}

export interface MastodonAnnualReports {
  annual_reports: MastodonAnnualReport[];
  accounts: MastodonAccount[];
  statuses: MastodonStatus[];
}

export function renderAnnualReport(row: AnnualReportRow): MastodonAnnualReport {
  return { year: row.year, data: row.data as AnnualReportData, schema_version: row.schemaVersion, share_url: null, account_id: row.accountId };
}

/** The viewer's own reports: `owner` is the viewer's account, already loaded with the token. */
export async function renderAnnualReports(
  db: DB,
  cfg: Config,
  rows: AnnualReportRow[],
  owner: RenderAccountRow,
  role?: RoleRow | null,
): Promise<MastodonAnnualReports> {
  const reports = rows.map(renderAnnualReport);
  const ids = [...new Set(reports.flatMap((r) => reportStatusIds(r.data)))];
  return {
    annual_reports: reports,
    accounts: rows.length ? [renderAccount(cfg, owner, role)] : [],
    statuses: ids.length ? await renderStatuses(db, cfg, ids, owner.id) : [],
  };
}
