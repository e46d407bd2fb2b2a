// POST /api/v1/apps (register a client) and GET /api/v1/apps/verify_credentials. `vapid_key` is the server's Web Push key,
// the same as in /api/v2/instance (made and stored on first use when the operator set none).
import { routeGroup } from "../../../route-group";
import { notFound } from "../../../lib/http/errors";
import { readParams } from "../../../lib/http/params";
import { requireToken } from "../../../oauth/guard";
import { vapidPublicKey } from "../../../push/index";
import { renderApplication, renderCredentialApplication } from "../../../entities/settings/application";
import { createApp, findAppById } from "../../../oauth/apps";

const r = routeGroup();

r.post("/", async (c) => {
  const p = await readParams(c);
  const owner = c.get("viewer")?.account?.id ?? null;
  const app = await createApp(c.get("db"), { client_name: p.client_name, redirect_uris: p.redirect_uris, scopes: p.scopes, website: p.website }, owner);
  return c.json(renderCredentialApplication(app, await vapidPublicKey(c.get("db"), c.env)));
});

r.get("/verify_credentials", requireToken(), async (c) => {
  const appId = c.get("viewer")!.applicationId;
  const app = appId ? await findAppById(c.get("db"), appId) : null;
  if (!app) throw notFound();
  return c.json(renderApplication(app, await vapidPublicKey(c.get("db"), c.env)));
});

export default r;
