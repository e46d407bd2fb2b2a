// Annual reports (Mastodon's Wrapstodon): when one may be generated, its state, asking for it, marking it read. The
// report itself is computed in the background, in bounded rounds (./annual-report-rounds.ts).
//
// As Mastodon 4.6 (AnnualReport.current_campaign, #state; Api::V1::AnnualReportsController#generate): a report of the
// current year may be generated from 10 to 31 December (UTC) while the operator leaves WRAPSTODON on; the account is
// eligible when it wrote a public or unlisted post that year (TopStatuses#eligible?). A report once made stays, and is
// served whenever asked for.
import { and, eq, lt, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type AnnualReportRow, annualReports } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { Config } from "../../env";
import { padId } from "../../lib/text/ids";
import { ANNUAL_REPORT_SCHEMA, yearIdRange } from "./annual-report-rounds";

export type AnnualReportStateName = "available" | "generating" | "eligible" | "ineligible";

/** A report still generating after this long without a round (its effect dead-lettered) may be asked for again. */
export const STALLED_AFTER_MS = 15 * 60_000;

/** The year whose report may be generated now, or null (outside 10–31 December, or turned off). */
export function currentCampaign(cfg: Pick<Config, "wrapstodon">, now = Date.now()): number | null {
  if (!cfg.wrapstodon) return null;
  const d = new Date(now);
  return d.getUTCMonth() === 11 && d.getUTCDate() >= 10 ? d.getUTCFullYear() : null;
}

/** The account's report row for the year, whatever its state. */
export async function findReport(db: DB, accountId: string, year: number): Promise<AnnualReportRow | null> {
  const [row] = await db
    .select()
    .from(annualReports)
    .where(and(eq(annualReports.accountId, accountId), eq(annualReports.year, year)))
    .limit(1);
  return row ?? null;
}

const generating = (row: AnnualReportRow | null, now: number) => row?.state === "generating" && row.updatedAt > now - STALLED_AFTER_MS;

/** Whether the account wrote a public or unlisted post in the year: one indexed probe. */
async function eligible(db: DB, accountId: string, year: number): Promise<boolean> {
  const { lo, hi } = yearIdRange(year);
  const rows = await db.all(sql`SELECT 1 FROM statuses WHERE account_id = ${padId(accountId)} AND id >= ${lo} AND id <= ${hi}
    AND visibility IN ('public', 'unlisted') AND reblog_of_id IS NULL LIMIT 1`);
  return rows.length > 0;
}

/** Mastodon's AnnualReport#state for the account and year. */
export async function annualReportState(db: DB, cfg: Pick<Config, "wrapstodon">, accountId: string, year: number, now = Date.now()) {
  const row = await findReport(db, accountId, year);
  if (row?.state === "available") return "available";
  if (generating(row, now)) return "generating";
  if (currentCampaign(cfg, now) === year && (await eligible(db, accountId, year))) return "eligible";
  return "ineligible";
}

/**
 * Starts generating the account's report for the current campaign's year: a row in `generating` state and the
 * `annual_report` effect that runs its first round. Nothing when the year is not the campaign's or a report exists;
 * a stalled generation starts again. Answers whether a generation is now under way.
 */
export async function requestAnnualReport(db: DB, fx: Effects, cfg: Pick<Config, "wrapstodon">, accountId: string, year: number, now = Date.now()) {
  if (currentCampaign(cfg, now) !== year) return false;
  const row = await findReport(db, accountId, year);
  if (row?.state === "available") return false;
  if (generating(row, now)) return true;
  const started = row
    ? await db
        .update(annualReports)
        .set({ cursor: null, progress: null, updatedAt: now })
        .where(
          and(
            eq(annualReports.accountId, accountId),
            eq(annualReports.year, year),
            eq(annualReports.state, "generating"),
            lt(annualReports.updatedAt, now - STALLED_AFTER_MS),
          ),
        )
        .returning({ year: annualReports.year })
    : await db
        .insert(annualReports)
        .values({ accountId, year, state: "generating", schemaVersion: ANNUAL_REPORT_SCHEMA, createdAt: now, updatedAt: now })
        .onConflictDoNothing()
        .returning({ year: annualReports.year });
  // Another request started it meanwhile: it recorded the round. Recorded after the write (whether it started one is
  // what it returned), by the send only (src/effects/commit.ts): a generation whose round was lost is stalled, and the
  // next request after STALLED_AFTER_MS starts it again.
  if (started.length) fx.add({ type: "annual_report", accountId, year });
  return true;
}

/** Marks the account's report for the year read; false when there is no such report. */
export async function markAnnualReportRead(db: DB, accountId: string, year: number, now = Date.now()): Promise<boolean> {
  const rows = await db
    .update(annualReports)
    .set({ viewedAt: now })
    .where(and(eq(annualReports.accountId, accountId), eq(annualReports.year, year), eq(annualReports.state, "available")))
    .returning({ year: annualReports.year });
  return rows.length > 0;
}
