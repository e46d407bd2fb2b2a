// Read side of annual reports (annual_reports, written by src/services/accounts/annual-report*.ts).
import { and, asc, eq, isNull } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type AnnualReportRow, annualReports } from "../../db/schema";

/** The account's finished reports it has not marked read (Mastodon's index lists `pending` ones), oldest year first. */
export async function unreadAnnualReports(db: DB, accountId: string): Promise<AnnualReportRow[]> {
  const t = annualReports;
  return db
    .select()
    .from(t)
    .where(and(eq(t.accountId, accountId), eq(t.state, "available"), isNull(t.viewedAt)))
    .orderBy(asc(t.year))
    .limit(20);
}

/** The account's finished report for the year, or null (one still generating is not served). */
export async function availableAnnualReport(db: DB, accountId: string, year: number): Promise<AnnualReportRow | null> {
  const t = annualReports;
  const [row] = await db
    .select()
    .from(t)
    .where(and(eq(t.accountId, accountId), eq(t.year, year), eq(t.state, "available")))
    .limit(1);
  return row ?? null;
}
