// /api/v1/follow_requests: requests to follow the viewer (locked accounts), with authorize and reject.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { notFound } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readPage } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { authorizeRequest, followRequestsPage, rejectRequest } from "../../../services/relationships/follows";
import { accountPage } from "../accounts/accounts";

const r = routeGroup();

function accountIdParam(c: Ctx): string {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  return id;
}

r.get("/", requireUser("read:follows"), async (c) => {
  const page = readPage(await readParams(c), 40, 80);
  return accountPage(c, await followRequestsPage(c.get("db"), me(c).account.id, page), page);
});

r.post("/:id/authorize", requireUser("write:follows"), async (c) =>
  c.json(await authorizeRequest(c.get("db"), c.get("fx"), me(c).account.id, accountIdParam(c))),
);

r.post("/:id/reject", requireUser("write:follows"), async (c) => c.json(await rejectRequest(c.get("db"), c.get("fx"), me(c).account.id, accountIdParam(c))));

export default r;
