// GET /api/v1/preferences: the user's posting and reading defaults (src/entities/settings/preferences.ts).
import { routeGroup } from "../../../route-group";
import { renderPreferences } from "../../../entities/settings/preferences";
import { me, requireUser } from "../../../oauth/guard";

const r = routeGroup();

r.get("/", requireUser("read:accounts"), (c) => c.json(renderPreferences(me(c).user.settings ?? {})));

export default r;
