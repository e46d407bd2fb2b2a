// GET /api/v1/blocks: accounts the viewer blocks, cursored by block row id.
import { routeGroup } from "../../../route-group";
import { readPage } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { blocksPage } from "../../../services/relationships/blocks";
import { accountPage } from "../accounts/accounts";

const r = routeGroup();

r.get("/", requireUser("read:blocks"), async (c) => {
  const page = readPage(await readParams(c), 40, 80);
  return accountPage(c, await blocksPage(c.get("db"), me(c).account.id, page), page);
});

export default r;
