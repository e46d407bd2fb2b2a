// /api/v1/admin/canonical_email_blocks and /api/v1/admin/email_domain_blocks (Mastodon's
// Api::V1::Admin::CanonicalEmailBlocksController and EmailDomainBlocksController). manage_blocks; admin:read:… /
// admin:write:… scopes of each resource.
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../../context";
import { renderAdminCanonicalEmailBlock, renderAdminEmailDomainBlock } from "../../../entities/admin-access-block";
import { parse, pathId, zStr } from "../../../lib/params";
import { requireStaff } from "../../../oauth/guard";
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
} from "../../../services/admin-email-blocks";
import { adminPage, staff } from "./staff";

export const canonicalEmailBlocks = new Hono<AppEnv>();
{
  const r = canonicalEmailBlocks;
  const read = requireStaff("manage_blocks", "admin:read:canonical_email_blocks");
  const write = requireStaff("manage_blocks", "admin:write:canonical_email_blocks");
  const emailParam = z.object({ email: zStr(320).optional(), canonical_email_hash: zStr(128).optional() }).passthrough();

  r.get("/", read, async (c) => c.json((await adminPage(c, (page) => canonicalEmailBlocksPage(c.get("db"), page))).map(renderAdminCanonicalEmailBlock)));
  // Before /:id. A read (it changes nothing), as Mastodon scopes it.
  r.post("/test", read, async (c) => {
    const p = await parse(c, emailParam);
    return c.json((await testCanonicalEmail(c.get("db"), p.email)).map(renderAdminCanonicalEmailBlock));
  });
  r.get("/:id", read, async (c) => c.json(renderAdminCanonicalEmailBlock(await getCanonicalEmailBlock(c.get("db"), pathId(c)))));
  r.post("/", write, async (c) => {
    const p = await parse(c, emailParam);
    return c.json(renderAdminCanonicalEmailBlock(await createCanonicalEmailBlock(c.get("db"), staff(c), { email: p.email, hash: p.canonical_email_hash })));
  });
  r.delete("/:id", write, async (c) => {
    await deleteCanonicalEmailBlock(c.get("db"), staff(c), pathId(c));
    return c.json({});
  });
}

export const emailDomainBlocks = new Hono<AppEnv>();
{
  const r = emailDomainBlocks;
  const read = requireStaff("manage_blocks", "admin:read:email_domain_blocks");
  const write = requireStaff("manage_blocks", "admin:write:email_domain_blocks");

  r.get("/", read, async (c) => {
    const rows = await adminPage(c, (page) => emailDomainBlocksPage(c.get("db"), page));
    return c.json(rows.map((b) => renderAdminEmailDomainBlock(b)));
  });
  r.get("/:id", read, async (c) => c.json(renderAdminEmailDomainBlock(await getEmailDomainBlock(c.get("db"), pathId(c)))));
  r.post("/", write, async (c) => {
    const p = await parse(c, z.object({ domain: zStr(300).optional() }).passthrough());
    return c.json(renderAdminEmailDomainBlock(await createEmailDomainBlock(c.get("db"), staff(c), p.domain)));
  });
  r.delete("/:id", write, async (c) => {
    await deleteEmailDomainBlock(c.get("db"), staff(c), pathId(c));
    return c.json({});
  });
}
