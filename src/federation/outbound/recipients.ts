// Who receives an outbound activity (Mastodon's StatusReachFinder, simplified): remote followers (shared inboxes
// collapsed), mentioned and otherwise involved remote accounts, never local accounts, suspended accounts or hosts
// under a suspending domain block (suspendedCheck, run by deliverActivity with its other statements), nor unavailable hosts.
import { and, eq, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, domainAllows, domainBlocks, favourites, follows, statuses } from "../../db/schema/index";
import type { Config } from "../../env";
import { domainAndParents } from "../../lib/text/domain-name";
import { padId } from "../../lib/text/ids";
import type { AccountRow } from "../../db/schema/index";
import { accountRows } from "../../db/table-rows";
import { valueList } from "../../db/id-list";

type Remote = Pick<AccountRow, "domain" | "inboxUrl" | "sharedInboxUrl" | "suspendedAt">;

const isRemote = (a: Remote | null | undefined): a is Remote => !!a && !!a.domain && !a.suspendedAt;

/** The inbox for a status-level delivery: the shared one when the server has it. */
export const preferredInbox = (a: Remote): string | null => a.sharedInboxUrl || a.inboxUrl || null;

/** The account's own inbox, for activities addressed to it alone (Follow, Like, Block...). */
export const personalInbox = (a: Remote): string | null => a.inboxUrl || a.sharedInboxUrl || null;

export function remoteInboxes(list: (Remote | null | undefined)[], pick = preferredInbox): string[] {
  return list
    .filter(isRemote)
    .map(pick)
    .filter((x): x is string => !!x);
}

/** Remote accounts with these actor URIs (a deleted status only left its mention URIs behind). */
export async function accountsByUris(db: DB, uris: string[]): Promise<AccountRow[]> {
  if (!uris.length) return [];
  return accountRows(db, { where: and(sql`${accounts.uri} IN ${valueList(uris)}`, isNotNull(accounts.domain)) });
}

/** Remote accounts that reblogged, favourited or replied to a status: they hold a copy an Update must reach. */
export async function interactedInboxes(db: DB, statusId: string): Promise<string[]> {
  const rows = await interactedInboxesStatement(db, statusId);
  return rows.map((r) => r.inbox).filter(Boolean);
}

/** interactedInboxes as a statement to put in a batch (its rows may hold an empty inbox: filter them). */
export function interactedInboxesStatement(db: DB, statusId: string) {
  const p = padId(statusId);
  return db
    .selectDistinct({ inbox: sql<string>`coalesce(${accounts.sharedInboxUrl}, ${accounts.inboxUrl})` })
    .from(accounts)
    .where(
      and(
        isNotNull(accounts.domain),
        isNull(accounts.suspendedAt),
        sql`${accounts.id} IN (SELECT account_id FROM ${statuses} WHERE reblog_of_id = ${p} OR in_reply_to_id = ${p}
          UNION SELECT account_id FROM ${favourites} WHERE status_id = ${p})`,
      ),
    );
}

/** Inboxes of the remote accounts a local account follows (delete_actor reaches them too). */
export async function followingInboxes(db: DB, accountId: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ inbox: sql<string>`coalesce(${accounts.sharedInboxUrl}, ${accounts.inboxUrl})` })
    .from(follows)
    .innerJoin(accounts, eq(accounts.id, follows.targetAccountId))
    .where(and(eq(follows.accountId, accountId), isNotNull(accounts.domain), isNull(accounts.suspendedAt)));
  return rows.map((r) => r.inbox).filter(Boolean);
}

/**
 * Drops inboxes on hosts under a suspending domain block (the host itself or a parent domain) and, in limited
 * federation mode, on hosts no domain allow names. One statement whatever the number of inboxes, for a batch
 * (deliverActivity runs it with its other statements): `statement` is null when no inbox parses, and `keep` takes the
 * statement's rows and returns the inboxes that stay.
 */
export function suspendedCheck(db: DB, inboxes: Iterable<string>, mode: Pick<Config, "limitedFederation">) {
  const list = [...new Set(inboxes)].filter(Boolean);
  const hosts = new Map<string, string[]>();
  for (const inbox of list) {
    let u: URL;
    try {
      u = new URL(inbox);
    } catch {
      continue;
    }
    hosts.set(inbox, [u.host.toLowerCase(), ...domainAndParents(u.hostname)]);
  }
  const candidates = JSON.stringify([...new Set([...hosts.values()].flat())]);
  const statement = hosts.size
    ? db.all<{ domain: string; allow: number }>(sql`
    SELECT lower(domain) AS domain, 0 AS allow FROM ${domainBlocks} WHERE severity = 'suspend' AND lower(domain) IN (SELECT value FROM json_each(${candidates}))
    UNION ALL
    SELECT lower(domain), 1 FROM ${domainAllows} WHERE ${mode.limitedFederation ? 1 : 0} = 1 AND lower(domain) IN (SELECT value FROM json_each(${candidates}))`)
    : null;
  const keep = (rows: { domain: string; allow: number }[]): string[] => {
    const suspended = new Set(rows.filter((r) => !r.allow).map((r) => r.domain));
    const allowed = new Set(rows.filter((r) => r.allow).map((r) => r.domain));
    return [...hosts]
      .filter(([, names]) => !names.some((n) => suspended.has(n)))
      .filter(([, names]) => !mode.limitedFederation || allowed.has(names[0]!) || allowed.has(names[1]!))
      .map(([inbox]) => inbox);
  };
  return { statement, keep };
}

/** suspendedCheck on its own: the inboxes that stay, in one round trip (none when no inbox parses). */
export async function withoutSuspended(db: DB, inboxes: Iterable<string>, mode: Pick<Config, "limitedFederation">): Promise<string[]> {
  const check = suspendedCheck(db, inboxes, mode);
  return check.statement ? check.keep(await check.statement) : [];
}

/** Inboxes of an account's remote followers, shared inboxes collapsed. */
export async function followerInboxes(db: DB, accountId: string): Promise<string[]> {
  const rows = await followerInboxesStatement(db, sql`${padId(accountId)}`);
  return rows.map((r) => r.inbox);
}

/** followerInboxes as a statement to put in a batch; `account`: the account's padded id, or a subquery giving it. */
export function followerInboxesStatement(db: DB, account: SQL) {
  return db.all<{ inbox: string }>(sql`SELECT DISTINCT coalesce(a.shared_inbox_url, a.inbox_url) AS inbox
    FROM ${follows} f JOIN ${accounts} a ON a.id = f.account_id
    WHERE f.target_account_id = ${account} AND a.domain IS NOT NULL AND a.suspended_at IS NULL
      AND coalesce(a.shared_inbox_url, a.inbox_url) IS NOT NULL`);
}
