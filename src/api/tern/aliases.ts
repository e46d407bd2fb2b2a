// Tern's API for account aliases (Mastodon has them only as the /settings/aliases form, which Tern also serves:
// src/web/settings/aliases.tsx). The aliases are the account's `alsoKnownAs` (src/services/accounts/account-migration.ts).
//   GET    /api/tern/aliases       (read:accounts)  [{id, acct, uri, created_at}], newest first
//   POST   /api/tern/aliases       (write:accounts) {acct}: resolved by WebFinger → the alias; 422 when it names no account
//   DELETE /api/tern/aliases/:id   (write:accounts) → {}; 404 when the account has no such alias
import { routeGroup } from "../../route-group";
import * as z from "zod";
import { renderAccountAlias } from "../../entities/accounts/account-alias";
import { notFound } from "../../lib/http/errors";
import { parseId } from "../../lib/text/ids";
import { parse, zStr } from "../../lib/http/params";
import { me, requireUser } from "../../oauth/guard";
import { addAlias, listAliases, removeAlias } from "../../services/accounts/account-migration";

const r = routeGroup();

r.get("/", requireUser("read:accounts"), async (c) => c.json((await listAliases(c.get("db"), me(c).account.id)).map(renderAccountAlias)));

r.post("/", requireUser("write:accounts"), async (c) => {
  const p = await parse(c, z.object({ acct: zStr(600).optional() }));
  return c.json(renderAccountAlias(await addAlias(c.get("db"), c.get("fx"), c.get("config"), me(c).account, p.acct)));
});

r.delete("/:id", requireUser("write:accounts"), async (c) => {
  const id = parseId(c.req.param("id"));
  if (!id) throw notFound();
  await removeAlias(c.get("db"), c.get("fx"), me(c).account, id);
  return c.json({});
});

export default r;
