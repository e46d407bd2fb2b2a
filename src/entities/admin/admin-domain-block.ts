// Admin::DomainBlock and Admin::DomainAllow (REST::Admin::DomainBlockSerializer, DomainAllowSerializer). `digest` is
// the SHA-256 hex of the domain, as Mastodon's domain_digest.
import { sha256Hex } from "../../lib/security/crypto";
import { isoTime } from "../urls";
import type { DomainAllowRow, DomainBlockRow } from "../../db/schema/index";

/** domain_blocks.severity holds one of these (the admin route validates it). */
export type MastodonDomainBlockSeverity = "silence" | "suspend" | "noop";

export interface MastodonAdminDomainBlock {
  id: string;
  domain: string;
  digest: string;
  created_at: string;
  severity: MastodonDomainBlockSeverity;
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
}

/** The 422 body of a create refused because a block already covers the domain. */
export interface MastodonExistingDomainBlockError {
  error: string;
  existing_domain_block: MastodonAdminDomainBlock;
}

export interface MastodonAdminDomainAllow {
  id: string;
  domain: string;
  created_at: string;
}

export async function renderAdminDomainBlock(b: DomainBlockRow): Promise<MastodonAdminDomainBlock> {
  return {
    id: b.id,
    domain: b.domain,
    digest: await sha256Hex(b.domain),
    created_at: isoTime(b.createdAt),
    severity: b.severity as MastodonDomainBlockSeverity,
    reject_media: b.rejectMedia,
    reject_reports: b.rejectReports,
    private_comment: b.privateComment,
    public_comment: b.publicComment,
    obfuscate: b.obfuscate,
  };
}

export const renderAdminDomainBlocks = (rows: DomainBlockRow[]) => Promise.all(rows.map(renderAdminDomainBlock));

/** The 422 body of a create refused because a block already covers the domain (ExistingDomainBlockErrorSerializer). */
export async function renderExistingDomainBlockError(message: string, existing: DomainBlockRow): Promise<MastodonExistingDomainBlockError> {
  return { error: message, existing_domain_block: await renderAdminDomainBlock(existing) };
}

export function renderAdminDomainAllow(a: DomainAllowRow): MastodonAdminDomainAllow {
  return { id: a.id, domain: a.domain, created_at: isoTime(a.createdAt) };
}
