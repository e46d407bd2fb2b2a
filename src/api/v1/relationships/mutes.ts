// GET /api/v1/mutes: muted accounts (MutedAccount: Account + mute_expires_at), cursored by mute row id.
import { routeGroup } from "../../../route-group";
import { renderMutedAccount } from "../../../entities/accounts/muted-account";
import { readPage, setLinkHeader } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { mutesPage } from "../../../services/relationships/mutes";

const r = routeGroup();

r.get("/", requireUser("read:mutes"), async (c) => {
  const page = readPage(await readParams(c), 40, 80);
  const rows = await mutesPage(c.get("db"), me(c).account.id, page);
  const cfg = c.get("config");
  setLinkHeader(c, rows[0]?.cursor, rows[rows.length - 1]?.cursor, rows.length === page.limit);
  return c.json(rows.map((x) => renderMutedAccount(cfg, x.account, x.expiresAt)));
});

export default r;
