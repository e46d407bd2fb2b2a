// /api/v1/admin/ip_blocks (Mastodon's Api::V1::Admin::IpBlocksController): list, show, create, update and delete IP
// rules. manage_blocks; admin:read:ip_blocks / admin:write:ip_blocks.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import type { Ctx } from "../../../context";
import { renderAdminIpBlock } from "../../../entities/admin/admin-access-block";
import { parse, pathId, zStr } from "../../../lib/http/params";
import { createIpBlock, deleteIpBlock, getIpBlock, type IpBlockInput, ipBlocksPage, updateIpBlock } from "../../../services/admin/blocks/ip-blocks";
import { listShowDelete, staff, staffRouter } from "./staff";

const { r, ...guards } = staffRouter("manage_blocks", "ip_blocks");
const { write } = guards;

const body = lazy(() =>
  z.object({ ip: zStr(100).optional(), severity: zStr(50).optional(), comment: zStr(5000).optional(), expires_in: zStr(20).optional() }).passthrough(),
);

async function input(c: Ctx): Promise<IpBlockInput> {
  const p = await parse(c, body());
  return { ip: p.ip, severity: p.severity, comment: p.comment, expiresIn: p.expires_in };
}

listShowDelete(r, { guards, page: ipBlocksPage, get: getIpBlock, remove: deleteIpBlock, render: renderAdminIpBlock });
r.post("/", write, async (c) => c.json(renderAdminIpBlock(await createIpBlock(c.get("db"), staff(c), await input(c)))));

const update = async (c: Ctx) => {
  const id = pathId(c);
  return c.json(renderAdminIpBlock(await updateIpBlock(c.get("db"), staff(c), id, await input(c))));
};
r.put("/:id", write, update);
r.patch("/:id", write, update);

export default r;
