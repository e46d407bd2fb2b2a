// Admin::CanonicalEmailBlock, Admin::EmailDomainBlock and Admin::IpBlock (Mastodon's REST::Admin serializers).
import { isoTime } from "../urls";
import type { CanonicalEmailBlockRow, EmailDomainBlockRow, IpBlockRow } from "../../db/schema/index";
import type { TagHistoryDay } from "../instance/tag";

export interface MastodonAdminCanonicalEmailBlock {
  id: string;
  canonical_email_hash: string;
}

export interface MastodonAdminEmailDomainBlock {
  id: string;
  domain: string;
  created_at: string;
  /** Admin::EmailDomainBlock::History: the same shape as a tag's day. */
  history: TagHistoryDay[];
}

/** ip_blocks.severity holds one of these (the admin route validates it). */
export type MastodonIpBlockSeverity = "sign_up_requires_approval" | "sign_up_block" | "no_access";

export interface MastodonAdminIpBlock {
  id: string;
  ip: string;
  severity: MastodonIpBlockSeverity;
  comment: string;
  created_at: string;
  expires_at: string | null;
}

export function renderAdminCanonicalEmailBlock(b: CanonicalEmailBlockRow): MastodonAdminCanonicalEmailBlock {
  return { id: b.id, canonical_email_hash: b.canonicalEmailHash };
}

const DAY_MS = 86_400_000;

/**
 * `history`: the last 7 days, newest first, as Mastodon's EmailDomainBlock history (day = midnight UTC in unix
 * seconds). Tern keeps no per-day counter of sign-up attempts, so `accounts` and `uses` are "0".
 */
export function renderAdminEmailDomainBlock(b: EmailDomainBlockRow, now = Date.now()): MastodonAdminEmailDomainBlock {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return {
    id: b.id,
    domain: b.domain,
    created_at: isoTime(b.createdAt),
    history: Array.from({ length: 7 }, (_, i) => ({ day: String((today - i * DAY_MS) / 1000), accounts: "0", uses: "0" })),
  };
}

export function renderAdminIpBlock(b: IpBlockRow): MastodonAdminIpBlock {
  return {
    id: b.id,
    ip: b.ip,
    severity: b.severity as MastodonIpBlockSeverity,
    comment: b.comment,
    created_at: isoTime(b.createdAt),
    expires_at: isoTime(b.expiresAt),
  };
}
