// Admin::CanonicalEmailBlock, Admin::EmailDomainBlock and Admin::IpBlock (Mastodon's REST::Admin serializers).
import { isoTime } from "./urls";
import type { CanonicalEmailBlockRow, EmailDomainBlockRow, IpBlockRow } from "../db/schema";

export function renderAdminCanonicalEmailBlock(b: CanonicalEmailBlockRow) {
  return { id: b.id, canonical_email_hash: b.canonicalEmailHash };
}

const DAY_MS = 86_400_000;

/**
 * `history`: the last 7 days, newest first, as Mastodon's EmailDomainBlock history (day = midnight UTC in unix
 * seconds). Tern keeps no per-day counter of sign-up attempts, so `accounts` and `uses` are "0".
 */
export function renderAdminEmailDomainBlock(b: EmailDomainBlockRow, now = Date.now()) {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return {
    id: b.id,
    domain: b.domain,
    created_at: isoTime(b.createdAt),
    history: Array.from({ length: 7 }, (_, i) => ({ day: String((today - i * DAY_MS) / 1000), accounts: "0", uses: "0" })),
  };
}

export function renderAdminIpBlock(b: IpBlockRow) {
  return { id: b.id, ip: b.ip, severity: b.severity, comment: b.comment, created_at: isoTime(b.createdAt), expires_at: isoTime(b.expiresAt) };
}
