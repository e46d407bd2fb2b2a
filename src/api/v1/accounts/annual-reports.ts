// /api/v1/annual_reports (Mastodon 4.3's Wrapstodon, with 4.6's state and generate): the viewer's unread reports,
// one year's report, its state, asking for it to be generated, marking it read. Scopes as Mastodon's controller:
// read:accounts to read, write:accounts to generate and mark read. A year is a number; anything else names no report.
import { routeGroup } from "../../../route-group";
import { renderAnnualReports } from "../../../entities/accounts/annual-report";
import { notFound } from "../../../lib/http/errors";
import { me, requireUser } from "../../../oauth/guard";
import { availableAnnualReport, unreadAnnualReports } from "../../../queries/accounts/annual-reports";
import { annualReportState, markAnnualReportRead, requestAnnualReport } from "../../../services/accounts/annual-report";
import type { Ctx } from "../../../context";

const r = routeGroup();

function pathYear(c: Ctx): number {
  const raw = c.req.param("year") ?? "";
  if (!/^\d{4}$/.test(raw)) throw notFound();
  return Number(raw);
}

/** Mastodon's AsyncRefresh header while a report is generating: clients poll again after `retry` seconds. */
function asyncRefreshHeader(c: Ctx, year: number) {
  c.header("Mastodon-Async-Refresh", `id="${asyncRefreshId(year)}", retry=2`);
}

/** The id of a report's generation for /api/v1_alpha/async_refreshes (the viewer's own: the token names the account). */
export const asyncRefreshId = (year: number) => `wrapstodon-${year}`;

r.get("/", requireUser("read:accounts"), async (c) => {
  const v = me(c);
  const db = c.get("db");
  return c.json(await renderAnnualReports(db, c.get("config"), await unreadAnnualReports(db, v.account.id), v.account, v.role));
});

r.get("/:year/state", requireUser("read:accounts"), async (c) => {
  const v = me(c);
  const year = pathYear(c);
  const state = await annualReportState(c.get("db"), c.get("config"), v.account.id, year);
  if (state === "generating") asyncRefreshHeader(c, year);
  return c.json({ state });
});

r.post("/:year/generate", requireUser("write:accounts"), async (c) => {
  const v = me(c);
  const year = pathYear(c);
  if (!(await requestAnnualReport(c.get("db"), c.get("fx"), c.get("config"), v.account.id, year))) return c.json({});
  asyncRefreshHeader(c, year);
  return c.body(null, 202);
});

r.post("/:year/read", requireUser("write:accounts"), async (c) => {
  if (!(await markAnnualReportRead(c.get("db"), me(c).account.id, pathYear(c)))) throw notFound();
  return c.json({});
});

r.get("/:year", requireUser("read:accounts"), async (c) => {
  const v = me(c);
  const db = c.get("db");
  const row = await availableAnnualReport(db, v.account.id, pathYear(c));
  if (!row) throw notFound();
  return c.json(await renderAnnualReports(db, c.get("config"), [row], v.account, v.role));
});

export default r;
