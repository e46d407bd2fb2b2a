// /api/v1/admin/domain_blocks (Mastodon's Api::V1::Admin::DomainBlocksController): list, show, create, update and
// delete instance domain blocks. manage_federation; admin:read:domain_blocks / admin:write:domain_blocks.
import * as z from "zod";
import { lazy } from "../../../lib/limits/lazy";
import type { Ctx } from "../../../context";
import { renderAdminDomainBlock, renderAdminDomainBlocks, renderExistingDomainBlockError } from "../../../entities/admin/admin-domain-block";
import { parse, pathId, zBool, zStr } from "../../../lib/http/params";
import {
  createDomainBlock,
  DomainBlockConflict,
  type DomainBlockInput,
  deleteDomainBlock,
  domainBlocksPage,
  getDomainBlock,
  updateDomainBlock,
} from "../../../services/admin/blocks/domain-blocks";
import { adminPage, staff, staffRouter } from "./staff";

const { r, read, write } = staffRouter("manage_federation", "domain_blocks");

const body = lazy(() =>
  z
    .object({
      domain: zStr(300).optional(),
      severity: zStr(20).optional(),
      reject_media: zBool,
      reject_reports: zBool,
      private_comment: zStr(5000).optional(),
      public_comment: zStr(5000).optional(),
      obfuscate: zBool,
    })
    .passthrough(),
);

async function input(c: Ctx): Promise<DomainBlockInput> {
  const p = await parse(c, body());
  return {
    domain: p.domain,
    severity: p.severity,
    rejectMedia: p.reject_media,
    rejectReports: p.reject_reports,
    privateComment: p.private_comment,
    publicComment: p.public_comment,
    obfuscate: p.obfuscate,
  };
}

r.get("/", read, async (c) => c.json(await renderAdminDomainBlocks(await adminPage(c, (page) => domainBlocksPage(c.get("db"), page)))));

r.get("/:id", read, async (c) => c.json(await renderAdminDomainBlock(await getDomainBlock(c.get("db"), pathId(c)))));

r.post("/", write, async (c) => {
  try {
    return c.json(await renderAdminDomainBlock(await createDomainBlock(c.get("db"), c.get("fx"), staff(c), await input(c))));
  } catch (e) {
    if (e instanceof DomainBlockConflict) return c.json(await renderExistingDomainBlockError(e.message, e.existing), 422);
    throw e;
  }
});

const update = async (c: Ctx) => {
  const id = pathId(c);
  return c.json(await renderAdminDomainBlock(await updateDomainBlock(c.get("db"), c.get("fx"), staff(c), id, await input(c))));
};
r.put("/:id", write, update);
r.patch("/:id", write, update);

r.delete("/:id", write, async (c) => {
  await deleteDomainBlock(c.get("db"), c.get("fx"), staff(c), pathId(c));
  return c.json({});
});

export default r;
