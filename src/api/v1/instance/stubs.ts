// Endpoints clients call at start-up that have no module of their own (trends now live in api/v1/instance/trends.ts). The
// profile directory is real. Mounted at /api.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import { renderAccount } from "../../../entities/accounts/account";
import { clampLimit } from "../../../lib/http/pagination";
import { parse, zBool, zInt } from "../../../lib/http/params";
import { requireUser, viewerAccountId } from "../../../oauth/guard";
import { directory } from "../../../queries/statuses/search";
import { notFound } from "../../../lib/http/errors";
import { readParams } from "../../../lib/http/params";
import { searchPeers } from "../../../services/instance/instance";

const r = routeGroup();

const directoryParams = lazy(() =>
  z.object({
    offset: zInt,
    limit: z.unknown().optional(),
    order: z.enum(["active", "new"]).optional(),
    local: zBool,
  }),
);

r.get("/v1/directory", async (c) => {
  const p = await parse(c, directoryParams());
  const rows = await directory(c.get("db"), {
    viewerId: viewerAccountId(c),
    order: p.order ?? "active",
    local: !!p.local,
    limit: clampLimit(p.limit, 40, 80),
    offset: Math.max(0, p.offset ?? 0),
  });
  const cfg = c.get("config");
  return c.json(rows.map((a) => renderAccount(cfg, a)));
});

/**
 * GET /api/v1/peers/search?q= (Mastodon's domain autocomplete): up to 10 known domains starting with q; `null` for an
 * empty q, as Mastodon renders it. 404 when peers are not shown (SHOW_PEERS off) or in limited federation mode.
 */
r.get("/v1/peers/search", async (c) => {
  const cfg = c.get("config");
  if (!cfg.showPeers || cfg.limitedFederation) throw notFound();
  const raw = (await readParams(c)).q;
  const q = typeof raw === "string" ? raw.trim().toLowerCase().slice(0, 253) : "";
  if (!q) return c.json(null);
  let prefix = q;
  try {
    prefix = new URL(`https://${q}/`).hostname;
  } catch {
    return c.json([]);
  }
  return c.json(await searchPeers(c.get("db"), prefix));
});

/** Mastodon 4.4's donation campaigns come from an API an operator configures; Tern has none: 204, as Mastodon without it. */
r.get("/v1/donation_campaigns", requireUser(), (c) => c.body(null, 204));

export default r;
