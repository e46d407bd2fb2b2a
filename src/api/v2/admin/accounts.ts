// GET /api/v2/admin/accounts: the list with Mastodon's newer filter parameters (origin, status, permissions,
// role_ids, invited_by); no defaults, so local and remote accounts of every status are listed unless filtered.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import { badRequest } from "../../../lib/http/errors";
import { parseId } from "../../../lib/text/ids";
import { parse, zArray, zId, zStr } from "../../../lib/http/params";
import { requireStaff } from "../../../oauth/guard";
import { ACCOUNT_STATUSES, type AccountStatusFilter, type AdminAccountFilter } from "../../../services/admin/accounts";
import { adminAccountList, filterText } from "../../v1/admin/accounts";

const r = routeGroup();

const filters = lazy(() =>
  z
    .object({
      origin: zStr(20).optional(),
      status: zStr(20).optional(),
      permissions: zStr(20).optional(),
      role_ids: zArray(zId, 50),
      invited_by: zStr(30).optional(),
      ...filterText(),
    })
    .passthrough(),
);

r.get("/", requireStaff("manage_users", "admin:read:accounts"), async (c) => {
  const p = await parse(c, filters());
  const filter: AdminAccountFilter = {
    username: p.username,
    displayName: p.display_name,
    byDomain: p.by_domain,
    email: p.email,
    ip: p.ip,
  };
  // Unknown values are a client error, as in Mastodon's AccountFilter (Mastodon::InvalidParameterError → 400).
  if (p.origin) {
    if (p.origin !== "local" && p.origin !== "remote") throw badRequest(`Unknown origin: ${p.origin}`);
    filter.origin = p.origin;
  }
  if (p.status) {
    if (!(ACCOUNT_STATUSES as readonly string[]).includes(p.status)) throw badRequest(`Unknown status: ${p.status}`);
    filter.status = p.status as AccountStatusFilter;
  }
  // Tern has no invites, so nobody was invited by anyone: the filter matches no account.
  if (p.invited_by) return c.json([]);
  if (p.permissions === "staff") filter.staff = true;
  else if (p.role_ids?.length) filter.roleIds = p.role_ids.map((x) => parseId(x)).filter((x): x is string => !!x);
  return adminAccountList(c, filter);
});

export default r;
