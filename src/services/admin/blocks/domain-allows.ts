// Domain allows (Mastodon's Admin::DomainAllowsController): the list of domains that federate in limited federation
// mode (LIMITED_FEDERATION; enforced by isDomainSuspended and withoutSuspended in src/federation). A create for a
// domain already allowed answers the existing row and logs nothing, as Mastodon does.
import { eq } from "drizzle-orm";
import type { DB } from "../../../db/client";
import { domainAllows } from "../../../db/schema";
import { adminBlockTable, isUnique, newRow, requiredDomain } from "./block-table";
import type { Staff } from "../log";
import type { DomainAllowRow } from "../../../db/schema";

const table = adminBlockTable(domainAllows, "DomainAllow");
export const domainAllowsPage = table.page;
export const getDomainAllow = table.get;
export const deleteDomainAllow = table.remove;

export async function createDomainAllow(db: DB, staff: Staff, rawDomain: string | undefined): Promise<DomainAllowRow> {
  const domain = requiredDomain(rawDomain);
  const find = async () => (await db.select().from(domainAllows).where(eq(domainAllows.domain, domain)).limit(1))[0];
  const known = await find();
  if (known) return known;
  const row: DomainAllowRow = newRow({ domain });
  try {
    await table.insert(db, staff, row);
  } catch (e) {
    const again = isUnique(e) ? await find() : undefined;
    if (again) return again;
    throw e;
  }
  return row;
}
