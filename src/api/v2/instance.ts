import { Hono } from "hono";
import type { AppEnv } from "../../context";
import { renderInstanceV2 } from "../../entities/instance";
import { loadInstanceV2 } from "../../services/instance";

const r = new Hono<AppEnv>();

// Public and the same for everyone (Mastodon caches it for 3 minutes even when authenticated).
r.get("/", async (c) => {
  const data = await loadInstanceV2(c.get("db"), c.env);
  c.header("Cache-Control", "public, max-age=180");
  return c.json(renderInstanceV2(c.get("config"), c.env, data));
});

export default r;
