// E-mail blocks for sign-up (Mastodon's CanonicalEmailBlock and EmailDomainBlock, their admin API controllers and
// UserEmailValidator). Every change and its audit-log entry are one batch.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../../db/client";
import { canonicalEmailBlocks, emailDomainBlocks } from "../../../db/schema";
import { sha256Hex } from "../../../lib/security/crypto";
import { domainAndParents, normalizeDomain } from "../../../lib/text/domain-name";
import { validationFailed } from "../../../lib/http/errors";
import { adminBlockTable, newRow, requiredDomain, takenAs } from "./block-table";
import type { Staff } from "../log";
import { valueList } from "../../../db/id-list";
import type { CanonicalEmailBlockRow, EmailDomainBlockRow } from "../../../db/schema";

/**
 * Mastodon's EmailHelper#email_to_canonical_email: lower case, then in the part before the first "@" every "." is
 * removed and everything from the first "+" on is cut ("Foo.Bar+x@Example.com" → "foobar@example.com").
 */
export function canonicalEmail(email: string): string {
  const lower = email.toLowerCase();
  const at = lower.indexOf("@");
  const [user, domain] = at < 0 ? [lower, ""] : [lower.slice(0, at), lower.slice(at + 1)];
  const local = user.replace(/\./g, "").split("+", 1)[0] ?? "";
  return `${local}@${domain}`;
}

export const canonicalEmailHash = (email: string) => sha256Hex(canonicalEmail(email));

// ---- canonical e-mail blocks ----

const canonicalTable = adminBlockTable(canonicalEmailBlocks, "CanonicalEmailBlock");
export const canonicalEmailBlocksPage = canonicalTable.page;
export const getCanonicalEmailBlock = canonicalTable.get;
export const deleteCanonicalEmailBlock = canonicalTable.remove;

/** POST /api/v1/admin/canonical_email_blocks/test: the blocks matching an address. */
export async function testCanonicalEmail(db: DB, email: string | undefined): Promise<CanonicalEmailBlockRow[]> {
  if (!email) return [];
  return db
    .select()
    .from(canonicalEmailBlocks)
    .where(eq(canonicalEmailBlocks.canonicalEmailHash, await canonicalEmailHash(email)));
}

/** `email` (hashed here) or a `canonical_email_hash` computed elsewhere; the address wins when both are given. */
export async function createCanonicalEmailBlock(db: DB, staff: Staff, input: { email?: string; hash?: string }): Promise<CanonicalEmailBlockRow> {
  const hash = input.email ? await canonicalEmailHash(input.email) : (input.hash?.trim().toLowerCase() ?? "");
  if (!hash) throw validationFailed("Canonical email hash can't be blank");
  const row: CanonicalEmailBlockRow = newRow({ canonicalEmailHash: hash, referenceAccountId: null });
  await canonicalTable.insert(db, staff, row).catch(takenAs("Canonical email hash has already been taken"));
  return row;
}

// ---- e-mail domain blocks ----

const domainTable = adminBlockTable(emailDomainBlocks, "EmailDomainBlock");
export const emailDomainBlocksPage = domainTable.page;
export const getEmailDomainBlock = domainTable.get;
export const deleteEmailDomainBlock = domainTable.remove;

export async function createEmailDomainBlock(db: DB, staff: Staff, rawDomain: string | undefined): Promise<EmailDomainBlockRow> {
  const row: EmailDomainBlockRow = newRow({ domain: requiredDomain(rawDomain) });
  await domainTable.insert(db, staff, row).catch(takenAs("Domain has already been taken"));
  return row;
}

// ---- enforcement (sign-up) ----

/** The statements that find blocks for a sign-up address (run in the caller's batch): domain (or a parent), canonical. */
export async function emailBlockQueries(db: DB, email: string) {
  const at = email.lastIndexOf("@");
  const domain = at < 0 ? "" : (normalizeDomain(email.slice(at + 1)) ?? email.slice(at + 1).toLowerCase());
  const hash = await canonicalEmailHash(email);
  return [
    db
      .select({ id: emailDomainBlocks.id })
      .from(emailDomainBlocks)
      .where(sql`${emailDomainBlocks.domain} IN ${valueList(domain ? domainAndParents(domain) : [])}`)
      .limit(1),
    db.select({ id: canonicalEmailBlocks.id }).from(canonicalEmailBlocks).where(eq(canonicalEmailBlocks.canonicalEmailHash, hash)).limit(1),
  ] as const;
}
