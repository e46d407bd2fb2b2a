// GET/POST /api/v1/markers: read positions of the home and notifications timelines. Tusky posts them as a form
// (home[last_read_id]=...), others as JSON; readParams nests both the same way.
import { routeGroup } from "../../../route-group";
import { validationFailed } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { readParams } from "../../../lib/http/params";
import { me, requireUser } from "../../../oauth/guard";
import { renderMarkers } from "../../../entities/settings/marker";
import { getMarkers, MARKER_TIMELINES, saveMarkers, type MarkerTimeline } from "../../../services/accounts/markers";

const r = routeGroup();

const isTimeline = (t: unknown): t is MarkerTimeline => typeof t === "string" && (MARKER_TIMELINES as readonly string[]).includes(t);

r.get("/", requireUser("read:statuses"), async (c) => {
  const raw = (await readParams(c)).timeline;
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.values(raw) : [raw];
  const timelines = [...new Set(list.filter(isTimeline))];
  return c.json(renderMarkers(await getMarkers(c.get("db"), me(c).account.id, timelines)));
});

r.post("/", requireUser("write:statuses"), async (c) => {
  const p = await readParams(c);
  const positions: Partial<Record<MarkerTimeline, string>> = {};
  for (const t of MARKER_TIMELINES) {
    const v = p[t];
    if (v === undefined || v === null) continue;
    const raw = typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>).last_read_id : undefined;
    const id = parseId(raw);
    if (!id) throw validationFailed(`${t}.last_read_id is invalid`);
    positions[t] = id;
  }
  return c.json(renderMarkers(await saveMarkers(c.get("db"), me(c).account.id, positions)));
});

export default r;
