// A user's own domain blocks: hide a whole remote server from the user. Followers from that server are removed.
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountDomainBlocks } from "../../db/schema";
import { validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import type { Page } from "../../lib/http/pagination";
import { cursorOrder, cursorWhere, inPageOrder } from "../../db/keyset";
import { exec } from "./follows";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";

/** Lower-case, IDNA (punycode) host without port or path; 422 for anything that is not a domain name. */
export function normalizeDomain(raw: string): string {
  const s = raw.trim().replace(/\.$/, "");
  if (!s || s.length > 253 || /[\s/@:?#\\%*]/.test(s)) throw validationFailed("Domain is invalid");
  let host: string;
  try {
    host = new URL(`https://${s}/`).hostname.toLowerCase();
  } catch {
    throw validationFailed("Domain is invalid");
  }
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(host)) throw validationFailed("Domain is invalid");
  return host;
}

export async function blockDomain(db: DB, fx: Effects, viewerId: string, domain: string): Promise<void> {
  const now = Date.now();
  const v = padId(viewerId);
  await commit(
    db,
    fx,
    [
      db
        .insert(accountDomainBlocks)
        .values({ id: snowflake(now), accountId: viewerId, domain, createdAt: now })
        .onConflictDoNothing(),
      exec(db, sql`DELETE FROM follows WHERE target_account_id = ${v} AND account_id IN (SELECT id FROM accounts WHERE domain = ${domain})`),
      exec(db, sql`DELETE FROM follow_requests WHERE target_account_id = ${v} AND account_id IN (SELECT id FROM accounts WHERE domain = ${domain})`),
    ],
    (fx) => fx.add({ type: "relations_changed", accountIds: [viewerId] }),
  );
}

export async function unblockDomain(db: DB, fx: Effects, viewerId: string, domain: string): Promise<void> {
  await commit(db, fx, [db.delete(accountDomainBlocks).where(and(eq(accountDomainBlocks.accountId, viewerId), eq(accountDomainBlocks.domain, domain)))], (fx) =>
    fx.add({ type: "relations_changed", accountIds: [viewerId] }),
  );
}

export async function domainBlocksPage(db: DB, viewerId: string, page: Page): Promise<{ cursor: string; domain: string }[]> {
  const rows = await db
    .select({ cursor: accountDomainBlocks.id, domain: accountDomainBlocks.domain })
    .from(accountDomainBlocks)
    .where(and(eq(accountDomainBlocks.accountId, viewerId), cursorWhere(accountDomainBlocks.id, page)))
    .orderBy(cursorOrder(accountDomainBlocks.id, page))
    .limit(page.limit);
  return inPageOrder(rows, page);
}
