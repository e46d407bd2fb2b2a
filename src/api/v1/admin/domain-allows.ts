// /api/v1/admin/domain_allows (Mastodon's Api::V1::Admin::DomainAllowsController): the domains that federate in
// limited federation mode. manage_federation; admin:read:domain_allows / admin:write:domain_allows.
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../../context";
import { renderAdminDomainAllow } from "../../../entities/admin-domain-block";
import { parse, pathId, zStr } from "../../../lib/params";
import { requireStaff } from "../../../oauth/guard";
import { createDomainAllow, deleteDomainAllow, domainAllowsPage, getDomainAllow } from "../../../services/admin-domain-allows";
import { adminPage, staff } from "./staff";

const r = new Hono<AppEnv>();
const read = requireStaff("manage_federation", "admin:read:domain_allows");
const write = requireStaff("manage_federation", "admin:write:domain_allows");

r.get("/", read, async (c) => c.json((await adminPage(c, (page) => domainAllowsPage(c.get("db"), page))).map(renderAdminDomainAllow)));

r.get("/:id", read, async (c) => c.json(renderAdminDomainAllow(await getDomainAllow(c.get("db"), pathId(c)))));

r.post("/", write, async (c) => {
  const p = await parse(c, z.object({ domain: zStr(300).optional() }).passthrough());
  return c.json(renderAdminDomainAllow(await createDomainAllow(c.get("db"), staff(c), p.domain)));
});

r.delete("/:id", write, async (c) => {
  await deleteDomainAllow(c.get("db"), staff(c), pathId(c));
  return c.json({});
});

export default r;
