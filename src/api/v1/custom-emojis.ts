import { Hono } from "hono";
import type { AppEnv } from "../../context";
import { mediaUrl } from "../../entities/urls";
import { localCustomEmojis } from "../../services/instance";

const r = new Hono<AppEnv>();

r.get("/", async (c) => {
  const cfg = c.get("config");
  const rows = await localCustomEmojis(c.get("db"));
  c.header("Cache-Control", "public, max-age=180");
  return c.json(
    rows.flatMap((e) => {
      const url = e.imageKey ? mediaUrl(cfg, e.imageKey) : e.imageRemoteUrl;
      if (!url) return [];
      return [{ shortcode: e.shortcode, url, static_url: url, visible_in_picker: e.visibleInPicker, category: e.category ?? null }];
    }),
  );
});

export default r;
