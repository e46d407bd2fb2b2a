import { Hono } from "hono";
import type { AppEnv } from "../../context";
import { me, requireUser } from "../../oauth/guard";

const r = new Hono<AppEnv>();

r.get("/", requireUser("read:accounts"), (c) => {
  const s = me(c).user.settings ?? {};
  return c.json({
    "posting:default:visibility": s["posting:default:visibility"] ?? "public",
    "posting:default:sensitive": s["posting:default:sensitive"] ?? false,
    "posting:default:language": s["posting:default:language"] || null,
    "posting:default:quote_policy": "public",
    "reading:expand:media": s["reading:expand:media"] ?? "default",
    "reading:expand:spoilers": s["reading:expand:spoilers"] ?? false,
  });
});

export default r;
