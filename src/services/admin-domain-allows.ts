// Domain allows (Mastodon's Admin::DomainAllowsController): the list of domains that federate in limited federation
// mode (LIMITED_FEDERATION; enforced by isDomainSuspended and withoutSuspended in src/federation). A create for a
// domain already allowed answers the existing row and logs nothing, as Mastodon does.
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { domainAllows } from "../db/schema";
import { cursorOrder, cursorWhere, inPageOrder } from "../db/keyset";
import { normalizeDomain } from "../lib/domain-name";
import { notFound, validationFailed } from "../lib/errors";
import { snowflake } from "../lib/ids";
import type { Page } from "../lib/pagination";
import { adminLogStatement, type Staff } from "./admin-log";

export type DomainAllowRow = typeof domainAllows.$inferSelect;

export async function domainAllowsPage(db: DB, page: Page): Promise<DomainAllowRow[]> {
  const rows = await db.select().from(domainAllows).where(cursorWhere(domainAllows.id, page)).orderBy(cursorOrder(domainAllows.id, page)).limit(page.limit);
  return inPageOrder(rows, page);
}

export async function getDomainAllow(db: DB, id: string): Promise<DomainAllowRow> {
  const [row] = await db.select().from(domainAllows).where(eq(domainAllows.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

export async function createDomainAllow(db: DB, staff: Staff, rawDomain: string | undefined): Promise<DomainAllowRow> {
  if (!rawDomain?.trim()) throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(rawDomain);
  if (!domain) throw validationFailed("Domain is invalid");
  const find = async () => (await db.select().from(domainAllows).where(eq(domainAllows.domain, domain)).limit(1))[0];
  const known = await find();
  if (known) return known;
  const now = Date.now();
  const row: DomainAllowRow = { id: snowflake(now), domain, createdAt: now };
  try {
    await db.batch([db.insert(domainAllows).values(row), adminLogStatement(db, staff, "create", "DomainAllow", row.id, now)]);
  } catch (e) {
    const again = String(e).includes("UNIQUE") ? await find() : undefined;
    if (again) return again;
    throw e;
  }
  return row;
}

export async function deleteDomainAllow(db: DB, staff: Staff, id: string): Promise<void> {
  await getDomainAllow(db, id);
  const now = Date.now();
  await db.batch([db.delete(domainAllows).where(eq(domainAllows.id, id)), adminLogStatement(db, staff, "destroy", "DomainAllow", id, now)]);
}
