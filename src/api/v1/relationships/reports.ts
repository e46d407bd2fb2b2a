// POST /api/v1/reports: the viewer reports an account (and some of its statuses and collections, or rules it broke) to staff.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import { renderFiledReport } from "../../../entities/accounts/report";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { parse, zArray, zBool, zId, zStr } from "../../../lib/http/params";
import { rateLimited } from "../../../http/rate-limit";
import { me, requireUser } from "../../../oauth/guard";
import { createReport, REPORT_CATEGORIES } from "../../../services/relationships/reports";

const r = routeGroup();

const body = lazy(() =>
  z.object({
    account_id: zId,
    status_ids: zArray(zId, 100),
    rule_ids: zArray(zId, 100),
    collection_ids: zArray(zId, 100),
    comment: zStr(20_000).optional(),
    category: z.enum(REPORT_CATEGORIES).optional(),
    forward: zBool,
  }),
);

const ids = (raw: string[] | undefined) =>
  (raw ?? []).map((x) => {
    const id = parseId(x);
    if (!id) throw notFound();
    return id;
  });

r.post("/", requireUser("write:reports"), rateLimited("reports"), async (c) => {
  const p = await parse(c, body());
  const targetId = parseId(p.account_id);
  if (!targetId) throw notFound();
  const { report, target } = await createReport(c.get("db"), c.get("fx"), me(c).account.id, {
    targetAccountId: targetId,
    statusIds: ids(p.status_ids),
    ruleIds: ids(p.rule_ids),
    collectionIds: ids(p.collection_ids),
    comment: p.comment ?? "",
    category: p.category,
    forward: p.forward ?? false,
  });
  return c.json(renderFiledReport(c.get("config"), report, target));
});

export default r;
