// Staff report handling (Mastodon's /api/v1/admin/reports): the list (open by default; `resolved`, `account_id`,
// `target_account_id`), one report, category and rules, assignment, resolve and reopen. manage_reports only.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import type { Ctx } from "../../../context";
import { renderAdminReports } from "../../../entities/admin/admin-report";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { parse, pathId, readParams, zArray, zBool, zId, zStr } from "../../../lib/http/params";
import { adminReportsPage, assignReportToSelf, getReport, reopenReport, resolveReport, unassignReport, updateReport } from "../../../services/admin/reports";
import { moderator, staffRouter } from "./staff";
import type { ReportRow } from "../../../db/schema";

const { r, read, write } = staffRouter("manage_reports", "reports");

const LIMIT = 100;
const MAX = 200;

const filters = lazy(() => z.object({ resolved: zBool, account_id: zId.optional(), target_account_id: zId.optional() }).passthrough());

/** An id filter that is not an id matches nothing (rather than everything). */
const filterId = (raw: string | undefined) => (raw === undefined || raw === "" ? undefined : (parseId(raw) ?? "0"));

const renderOne = async (c: Ctx, report: ReportRow) => {
  const [body] = await renderAdminReports(c.get("db"), c.get("config"), [report]);
  return c.json(body);
};

r.get("/", read, async (c) => {
  const p = await parse(c, filters());
  const page = readPage(await readParams(c), LIMIT, MAX);
  const rows = await adminReportsPage(
    c.get("db"),
    { resolved: !!p.resolved, accountId: filterId(p.account_id), targetAccountId: filterId(p.target_account_id) },
    page,
  );
  setLinkHeader(c, rows[0]?.id, rows.at(-1)?.id, rows.length === page.limit);
  return c.json(await renderAdminReports(c.get("db"), c.get("config"), rows));
});

r.get("/:id", read, async (c) => renderOne(c, await getReport(c.get("db"), pathId(c))));

const updateBody = lazy(() => z.object({ category: zStr(50).optional(), rule_ids: zArray(zId, 100) }).passthrough());

r.put("/:id", write, async (c) => {
  const id = pathId(c);
  const p = await parse(c, updateBody());
  const ruleIds = p.rule_ids?.map((x) => {
    const rid = parseId(x);
    if (!rid) throw notFound();
    return rid;
  });
  return renderOne(c, await updateReport(c.get("db"), moderator(c), id, { category: p.category, ruleIds }));
});

r.post("/:id/assign_to_self", write, async (c) => renderOne(c, await assignReportToSelf(c.get("db"), moderator(c), pathId(c))));
r.post("/:id/unassign", write, async (c) => renderOne(c, await unassignReport(c.get("db"), moderator(c), pathId(c))));
r.post("/:id/resolve", write, async (c) => renderOne(c, await resolveReport(c.get("db"), moderator(c), pathId(c))));
r.post("/:id/reopen", write, async (c) => renderOne(c, await reopenReport(c.get("db"), moderator(c), pathId(c))));

export default r;
