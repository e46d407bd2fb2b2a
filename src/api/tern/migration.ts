// Tern's API for moving an account (Mastodon has it only as the /settings/migration form, which Tern also serves:
// src/web/settings/migration.tsx; src/services/accounts/account-migration.ts):
//   GET  /api/tern/migration   (read:accounts)  {moved_to: Account | null, also_known_as, migrations, cooldown_until}
//   POST /api/tern/migration   (write:accounts) {acct, current_password}: moves the account → {moved_to: Account};
//                              422 for an unknown handle, a target without this account in its alsoKnownAs, within 30
//                              days of the last move, or (checked last, so the other refusals never confirm it) a
//                              wrong password; 429 once the account's password budget is spent (src/oauth/credentials.ts)
import { routeGroup } from "../../route-group";
import * as z from "zod";
import type { Ctx } from "../../context";
import { renderMigrationState, renderMoved } from "../../entities/accounts/account-migration";
import { parse, zStr } from "../../lib/http/params";
import { me, requireUser } from "../../oauth/guard";
import { currentMigrationState, moveAccount } from "../../services/accounts/account-migration";
import { credentialCheck } from "../../oauth/credentials";

const r = routeGroup();

async function stateJson(c: Ctx) {
  const { account, state } = await currentMigrationState(c.get("db"), me(c).account);
  return renderMigrationState(c.get("config"), account, state);
}

r.get("/", requireUser("read:accounts"), async (c) => c.json(await stateJson(c)));

r.post("/", requireUser("write:accounts"), async (c) => {
  const p = await parse(c, z.object({ acct: zStr(600).optional(), current_password: zStr(1000).optional() }));
  const v = me(c);
  const target = await moveAccount(c.get("db"), c.get("fx"), c.get("config"), credentialCheck(c, v.user), v, { acct: p.acct, password: p.current_password });
  return c.json(renderMoved(c.get("config"), target));
});

export default r;
