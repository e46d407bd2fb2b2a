// /api/v1/admin/canonical_email_blocks and /api/v1/admin/email_domain_blocks (Mastodon's
// Api::V1::Admin::CanonicalEmailBlocksController and EmailDomainBlocksController). manage_blocks; admin:read:… /
// admin:write:… scopes of each resource.
import { routeGroup } from "../../../route-group";
import { lazy } from "../../../lib/limits/lazy";
import * as z from "zod";
import { renderAdminCanonicalEmailBlock, renderAdminEmailDomainBlock } from "../../../entities/admin/admin-access-block";
import { parse, zStr } from "../../../lib/http/params";
import {
  canonicalEmailBlocksPage,
  createCanonicalEmailBlock,
  createEmailDomainBlock,
  deleteCanonicalEmailBlock,
  deleteEmailDomainBlock,
  emailDomainBlocksPage,
  getCanonicalEmailBlock,
  getEmailDomainBlock,
  testCanonicalEmail,
} from "../../../services/admin/blocks/email-blocks";
import { listShowDelete, staff, staffGuards } from "./staff";

export const canonicalEmailBlocks = routeGroup();
{
  const r = canonicalEmailBlocks;
  const guards = staffGuards("manage_blocks", "canonical_email_blocks");
  const emailParam = lazy(() => z.object({ email: zStr(320).optional(), canonical_email_hash: zStr(128).optional() }).passthrough());

  // Before /:id. A read (it changes nothing), as Mastodon scopes it.
  r.post("/test", guards.read, async (c) => {
    const p = await parse(c, emailParam());
    return c.json((await testCanonicalEmail(c.get("db"), p.email)).map(renderAdminCanonicalEmailBlock));
  });
  listShowDelete(r, {
    guards,
    page: canonicalEmailBlocksPage,
    get: getCanonicalEmailBlock,
    remove: deleteCanonicalEmailBlock,
    render: renderAdminCanonicalEmailBlock,
  });
  r.post("/", guards.write, async (c) => {
    const p = await parse(c, emailParam());
    return c.json(renderAdminCanonicalEmailBlock(await createCanonicalEmailBlock(c.get("db"), staff(c), { email: p.email, hash: p.canonical_email_hash })));
  });
}

export const emailDomainBlocks = routeGroup();
{
  const r = emailDomainBlocks;
  const guards = staffGuards("manage_blocks", "email_domain_blocks");

  listShowDelete(r, { guards, page: emailDomainBlocksPage, get: getEmailDomainBlock, remove: deleteEmailDomainBlock, render: renderAdminEmailDomainBlock });
  r.post("/", guards.write, async (c) => {
    const p = await parse(c, z.object({ domain: zStr(300).optional() }).passthrough());
    return c.json(renderAdminEmailDomainBlock(await createEmailDomainBlock(c.get("db"), staff(c), p.domain)));
  });
}
