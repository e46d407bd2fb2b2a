import { routeGroup } from "../../../route-group";
import { me, requireUser } from "../../../oauth/guard";

const r = routeGroup();

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
