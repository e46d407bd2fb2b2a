import { routeGroup } from "../../../route-group";
import { mediaUrl } from "../../../entities/urls";
import { instanceDocument } from "../../../services/instance/instance-cache";

const r = routeGroup();

// From the isolate's memory, like the instance documents (src/services/instance/instance-cache.ts).
r.get("/", async (c) => {
  const cfg = c.get("config");
  const body = await instanceDocument(c.get("db"), c.env, `emojis ${cfg.origin}`, (s) =>
    s.parts.emojis.flatMap((e) => {
      const url = e.imageKey ? mediaUrl(cfg, e.imageKey) : e.imageRemoteUrl;
      if (!url) return [];
      return [{ shortcode: e.shortcode, url, static_url: url, visible_in_picker: e.visibleInPicker, category: e.category ?? null }];
    }),
  );
  return c.body(body, 200, { "content-type": "application/json", "cache-control": "public, max-age=180" });
});

export default r;
