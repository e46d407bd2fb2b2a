// The dashboard data (Mastodon's /api/v1/admin/measures, /dimensions and /retention): POST with `keys[]`, `start_at`,
// `end_at` (and `limit` for dimensions, `frequency` for retention), computed by src/services/admin/measures.ts.
// view_dashboard only. Mounted at /api/v1/admin.
import { routeGroup } from "../../../route-group";
import { clampLimit } from "../../../lib/http/pagination";
import { readParams } from "../../../lib/http/params";
import { requireStaff } from "../../../oauth/guard";
import { adminDimensions, adminMeasures, adminRetention, readSpan } from "../../../services/admin/measures";

const r = routeGroup();

const dashboard = requireStaff("view_dashboard", "admin:read");

/** `keys[]` (or a single `keys`) as strings; at most 50 are looked at. */
function keysOf(p: Record<string, unknown>): string[] {
  const raw = p.keys;
  const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.values(raw) : raw === undefined ? [] : [raw];
  return list.filter((k): k is string => typeof k === "string").slice(0, 50);
}

r.post("/measures", dashboard, async (c) => {
  const p = await readParams(c);
  const span = readSpan(p.start_at, p.end_at);
  return c.json(await adminMeasures(c.get("db"), keysOf(p), span, p));
});

r.post("/dimensions", dashboard, async (c) => {
  const p = await readParams(c);
  const span = readSpan(p.start_at, p.end_at, { open: true });
  const limit = clampLimit(p.limit, 10, 100);
  return c.json(await adminDimensions(c.get("db"), keysOf(p), span, limit, p, c.get("config").domain));
});

r.post("/retention", dashboard, async (c) => {
  const p = await readParams(c);
  const span = readSpan(p.start_at, p.end_at);
  // Anything but "month" is "day", as Mastodon's Retention reads it.
  return c.json(await adminRetention(c.get("db"), span, p.frequency === "month" ? "month" : "day"));
});

export default r;
