// E-mail blocks for sign-up (Mastodon's CanonicalEmailBlock and EmailDomainBlock, their admin API controllers and
// UserEmailValidator). Every change and its audit-log entry are one batch.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { canonicalEmailBlocks, emailDomainBlocks } from "../db/schema";
import { cursorOrder, cursorWhere, inPageOrder } from "../db/keyset";
import { sha256Hex } from "../lib/crypto";
import { domainAndParents, normalizeDomain } from "../lib/domain-name";
import { notFound, validationFailed } from "../lib/errors";
import { snowflake } from "../lib/ids";
import type { Page } from "../lib/pagination";
import { adminLogStatement, type Staff } from "./admin-log";

export type CanonicalEmailBlockRow = typeof canonicalEmailBlocks.$inferSelect;
export type EmailDomainBlockRow = typeof emailDomainBlocks.$inferSelect;

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

const isUnique = (e: unknown) => String(e).includes("UNIQUE");

// ---- canonical e-mail blocks ----

export async function canonicalEmailBlocksPage(db: DB, page: Page): Promise<CanonicalEmailBlockRow[]> {
  const t = canonicalEmailBlocks;
  const rows = await db.select().from(t).where(cursorWhere(t.id, page)).orderBy(cursorOrder(t.id, page)).limit(page.limit);
  return inPageOrder(rows, page);
}

export async function getCanonicalEmailBlock(db: DB, id: string): Promise<CanonicalEmailBlockRow> {
  const [row] = await db.select().from(canonicalEmailBlocks).where(eq(canonicalEmailBlocks.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

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
  const now = Date.now();
  const row: CanonicalEmailBlockRow = { id: snowflake(now), canonicalEmailHash: hash, referenceAccountId: null, createdAt: now };
  try {
    await db.batch([db.insert(canonicalEmailBlocks).values(row), adminLogStatement(db, staff, "create", "CanonicalEmailBlock", row.id, now)]);
  } catch (e) {
    if (isUnique(e)) throw validationFailed("Canonical email hash has already been taken");
    throw e;
  }
  return row;
}

export async function deleteCanonicalEmailBlock(db: DB, staff: Staff, id: string): Promise<void> {
  await getCanonicalEmailBlock(db, id);
  const now = Date.now();
  await db.batch([
    db.delete(canonicalEmailBlocks).where(eq(canonicalEmailBlocks.id, id)),
    adminLogStatement(db, staff, "destroy", "CanonicalEmailBlock", id, now),
  ]);
}

// ---- e-mail domain blocks ----

export async function emailDomainBlocksPage(db: DB, page: Page): Promise<EmailDomainBlockRow[]> {
  const t = emailDomainBlocks;
  const rows = await db.select().from(t).where(cursorWhere(t.id, page)).orderBy(cursorOrder(t.id, page)).limit(page.limit);
  return inPageOrder(rows, page);
}

export async function getEmailDomainBlock(db: DB, id: string): Promise<EmailDomainBlockRow> {
  const [row] = await db.select().from(emailDomainBlocks).where(eq(emailDomainBlocks.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

export async function createEmailDomainBlock(db: DB, staff: Staff, rawDomain: string | undefined): Promise<EmailDomainBlockRow> {
  if (!rawDomain?.trim()) throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(rawDomain);
  if (!domain) throw validationFailed("Domain is invalid");
  const now = Date.now();
  const row: EmailDomainBlockRow = { id: snowflake(now), domain, createdAt: now };
  try {
    await db.batch([db.insert(emailDomainBlocks).values(row), adminLogStatement(db, staff, "create", "EmailDomainBlock", row.id, now)]);
  } catch (e) {
    if (isUnique(e)) throw validationFailed("Domain has already been taken");
    throw e;
  }
  return row;
}

export async function deleteEmailDomainBlock(db: DB, staff: Staff, id: string): Promise<void> {
  await getEmailDomainBlock(db, id);
  const now = Date.now();
  await db.batch([db.delete(emailDomainBlocks).where(eq(emailDomainBlocks.id, id)), adminLogStatement(db, staff, "destroy", "EmailDomainBlock", id, now)]);
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
      .where(sql`${emailDomainBlocks.domain} IN (SELECT value FROM json_each(${JSON.stringify(domain ? domainAndParents(domain) : [])}))`)
      .limit(1),
    db.select({ id: canonicalEmailBlocks.id }).from(canonicalEmailBlocks).where(eq(canonicalEmailBlocks.canonicalEmailHash, hash)).limit(1),
  ] as const;
}
