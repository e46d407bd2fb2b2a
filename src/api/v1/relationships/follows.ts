// POST /api/v1/follows: follow by address (`user`, `@user@domain`). Unknown remote accounts are resolved through
// WebFinger first (src/federation/remote/resolve.ts).
import { routeGroup } from "../../../route-group";
import * as z from "zod";
import { notFound } from "../../../lib/http/errors";
import { parse, zStr } from "../../../lib/http/params";
import { rateLimited } from "../../../http/rate-limit";
import { me, requireUser } from "../../../oauth/guard";
import { lookupAccount } from "../../../queries/accounts/accounts";
import { follow } from "../../../services/relationships/follows";
import { readFollowOptions } from "../accounts/accounts";
import { resolveForFollow } from "../../../federation/remote/resolve";

const r = routeGroup();

r.post("/", requireUser("write:follows"), rateLimited("follows"), async (c) => {
  const p = await parse(c, z.object({ uri: zStr(600) }).passthrough());
  const opts = await readFollowOptions(c);
  const acct = p.uri.replace(/^acct:/i, "");
  const target = (await lookupAccount(c.get("db"), c.get("config"), acct)) ?? (await resolveForFollow(c.get("db"), c.get("config"), acct));
  if (!target || target.suspendedAt) throw notFound();
  const viewer = me(c).account;
  return c.json(await follow(c.get("db"), c.get("fx"), viewer.id, target.id, opts, { silenced: !!viewer.silencedAt }));
});

export default r;
