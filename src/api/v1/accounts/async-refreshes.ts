// GET /api/v1_alpha/async_refreshes/:id (Mastodon 4.4, still "alpha" in 4.6): whether background work a response
// announced with a `Mastodon-Async-Refresh` header is still running. Tern announces one kind: an annual report's
// generation (`wrapstodon-<year>`, the viewer's own report). Any other id is a 404.
import { routeGroup } from "../../../route-group";
import { notFound } from "../../../lib/http/errors";
import { me, requireUser } from "../../../oauth/guard";
import { annualReportState } from "../../../services/accounts/annual-report";

const r = routeGroup();

r.get("/:id", requireUser("read"), async (c) => {
  const id = c.req.param("id");
  const m = /^wrapstodon-(\d{4})$/.exec(id);
  if (!m) throw notFound();
  const state = await annualReportState(c.get("db"), c.get("config"), me(c).account.id, Number(m[1]));
  return c.json({ async_refresh: { id, status: state === "generating" ? "running" : "finished", result_count: null } });
});

export default r;
