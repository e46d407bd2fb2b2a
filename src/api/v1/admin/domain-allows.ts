// /api/v1/admin/domain_allows (Mastodon's Api::V1::Admin::DomainAllowsController): the domains that federate in
// limited federation mode. manage_federation; admin:read:domain_allows / admin:write:domain_allows.
import * as z from "zod";
import { renderAdminDomainAllow } from "../../../entities/admin/admin-domain-block";
import { parse, zStr } from "../../../lib/http/params";
import { createDomainAllow, deleteDomainAllow, domainAllowsPage, getDomainAllow } from "../../../services/admin/blocks/domain-allows";
import { listShowDelete, staff, staffRouter } from "./staff";

const { r, ...guards } = staffRouter("manage_federation", "domain_allows");

listShowDelete(r, { guards, page: domainAllowsPage, get: getDomainAllow, remove: deleteDomainAllow, render: renderAdminDomainAllow });

r.post("/", guards.write, async (c) => {
  const p = await parse(c, z.object({ domain: zStr(300).optional() }).passthrough());
  return c.json(renderAdminDomainAllow(await createDomainAllow(c.get("db"), staff(c), p.domain)));
});

export default r;
