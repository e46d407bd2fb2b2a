// Follow suggestions: GET /api/v2/suggestions ({source, sources, account}), the legacy GET /api/v1/suggestions
// (accounts), and DELETE /api/v1/suggestions/:account_id (never suggest that account again). Mounted at /api.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { renderAccount } from "../../../entities/accounts/account";
import { renderSuggestion } from "../../../entities/accounts/suggestion";
import { clampLimit } from "../../../lib/http/pagination";
import { pathId, readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { accountsByIds } from "../../../queries/accounts/accounts";
import { suggestionsFor } from "../../../queries/accounts/suggestions";
import { dismissSuggestion } from "../../../services/relationships/suggestions";

const r = routeGroup();

async function suggestions(c: Ctx) {
  const v = me(c);
  const db = c.get("db");
  const rows = await suggestionsFor(db, v.account.id, clampLimit((await readParams(c)).limit, 40, 80));
  const accounts = new Map(
    (
      await accountsByIds(
        db,
        rows.map((s) => s.accountId),
      )
    ).map((a) => [a.id, a]),
  );
  const cfg = c.get("config");
  return rows.flatMap((s) => {
    const a = accounts.get(s.accountId);
    return a ? [{ row: s, account: renderAccount(cfg, a) }] : [];
  });
}

r.get("/v2/suggestions", requireUser("read:accounts"), async (c) =>
  c.json((await suggestions(c)).map(({ row, account }) => renderSuggestion(row.sources, account))),
);
r.get("/v1/suggestions", requireUser("read:accounts"), async (c) => c.json((await suggestions(c)).map((s) => s.account)));
r.delete("/v1/suggestions/:id", requireUser("write:accounts"), async (c) => {
  await dismissSuggestion(c.get("db"), me(c).account.id, pathId(c));
  return c.json({});
});

export default r;
