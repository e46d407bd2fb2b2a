// GET /api/v1/endorsements: accounts the viewer features on their profile, cursored by pin row id.
import { routeGroup } from "../../../route-group";
import { readPage } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { endorsementsPage } from "../../../services/relationships/endorsements";
import { accountPage } from "../accounts/accounts";

const r = routeGroup();

r.get("/", requireUser("read:accounts"), async (c) => {
  const page = readPage(await readParams(c), 40, 80);
  return accountPage(c, await endorsementsPage(c.get("db"), me(c).account.id, page), page);
});

export default r;
