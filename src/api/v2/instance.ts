import { routeGroup } from "../../route-group";
import { renderInstanceV2 } from "../../entities/instance/instance";
import { expireInstanceCache, instanceCache } from "../../services/instance/instance-cache";
import { ensureVapidKey, instanceV2Data } from "../../services/instance/instance";

const r = routeGroup();

// Public and the same for everyone (Mastodon caches it for 3 minutes even when authenticated). Served from the
// isolate's memory (src/services/instance/instance-cache.ts).
r.get("/", async (c) => {
  const cfg = c.get("config");
  const db = c.get("db");
  let cache = await instanceCache(db, c.env);
  // The first request a server ever gets makes its VAPID pair; later ones serve from memory.
  if (await ensureVapidKey(db, c.env, cache.snapshot)) {
    expireInstanceCache();
    cache = await instanceCache(db, c.env);
  }
  const body = await cache.document(`v2 ${cfg.origin}`, (s) => renderInstanceV2(cfg, c.env, instanceV2Data(s)));
  return c.body(body, 200, { "content-type": "application/json", "cache-control": "public, max-age=180" });
});

export default r;
