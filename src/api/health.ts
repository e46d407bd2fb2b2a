// GET /health: `OK` while the Worker runs, as Mastodon answers (uptime monitors and client libraries probe it). No
// D1 or other binding is touched, so it stays cheap under any probe rate.
import { routeGroup } from "../route-group";

const r = routeGroup();
r.on(["GET", "HEAD"], "/", (c) => c.text("OK", 200, { "cache-control": "no-store" }));
export default r;
