// Instance domain blocks (Mastodon's Admin::DomainBlocksController, BlockDomainService, UnblockDomainService).
// The row and its audit-log entry are written in one batch; the accounts of the domain (and its subdomains) are then
// silenced or suspended by the `domain_block_apply` effect in bounded rounds. A suspension also cuts follows and
// follow requests both ways and removes the domain's statuses from home and list feeds (Mastodon sends nothing to a
// suspended domain); the statuses stay stored but hidden, since every read path skips suspended authors. Accounts carry
// the block's created_at as their silenced_at / suspended_at, which is how lifting the block (or changing its
// severity) finds exactly the accounts the block limited. Follows are not restored. A block with reject_media marks the
// domain's accounts (accounts.reject_media, migrations/0028): their media, avatars, headers and emojis are then shown as
// Mastodon shows files it never downloaded; the same rounds keep that mark in step when reject_media is set, cleared or
// the block lifted (the mark is computed from all blocks, so a parent domain's block still counts).
import { and, eq, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { lazy } from "../../../lib/limits/lazy";
import type { DB } from "../../../db/client";
import { batchable, idList, runBatch, type Statement } from "../../../db/client";
import { accounts, domainBlocks, followRequests, follows } from "../../../db/schema";
import type { Effects } from "../../../effects/collector";
import { commit } from "../../../effects/commit";
import { domainAndParents } from "../../../lib/text/domain-name";
import { validationFailed } from "../../../lib/http/errors";
import { padId, snowflake } from "../../../lib/text/ids";
import { knownDomainsCte } from "../../../db/known-domains";
import { adminBlockTable, isUnique, requiredDomain } from "./block-table";
import { adminLogStatement, type Staff } from "../log";
import { valueList } from "../../../db/id-list";
import type { DomainBlockRow } from "../../../db/schema";

export const DOMAIN_BLOCK_SEVERITIES = ["silence", "suspend", "noop"] as const;
type Severity = (typeof DOMAIN_BLOCK_SEVERITIES)[number];

/** Accounts handled per round of `domain_block_apply` (each round is one read and one batch). */
export const DOMAIN_BLOCK_ROUND = 200;

export interface DomainBlockInput {
  domain?: string;
  severity?: string;
  rejectMedia?: boolean;
  rejectReports?: boolean;
  privateComment?: string;
  publicComment?: string;
  obfuscate?: boolean;
}

/** A create for a domain already covered by a block at least as strict (the route renders it). */
export class DomainBlockConflict extends Error {
  constructor(readonly existing: DomainBlockRow) {
    super(`You have already imposed stricter limits on ${existing.domain}.`);
  }
}

// Deleting a block also lifts what it did to its accounts (deleteDomainBlock), so only its reads are the table's.
const table = adminBlockTable(domainBlocks, "DomainBlock");
export const domainBlocksPage = table.page;
export const getDomainBlock = table.get;

/** Mastodon's DomainBlock.rule_for: the block on the domain itself or its nearest blocked parent. */
async function ruleFor(db: DB, domain: string): Promise<DomainBlockRow | undefined> {
  const rows = await db
    .select()
    .from(domainBlocks)
    .where(sql`${domainBlocks.domain} IN ${valueList(domainAndParents(domain))}`);
  return rows.sort((a, b) => b.domain.length - a.domain.length)[0];
}

/** Mastodon's DomainBlock#stricter_than?. */
function stricterThan(a: Pick<DomainBlockRow, "severity" | "rejectMedia" | "rejectReports">, b: DomainBlockRow): boolean {
  if (a.severity === "suspend") return true;
  if (b.severity === "suspend" && a.severity !== "suspend") return false;
  if (b.severity === "silence" && a.severity === "noop") return false;
  return (a.rejectMedia || !b.rejectMedia) && (a.rejectReports || !b.rejectReports);
}

function checkSeverity(raw: string | undefined): Severity | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!(DOMAIN_BLOCK_SEVERITIES as readonly string[]).includes(raw)) throw validationFailed("Severity is not included in the list");
  return raw as Severity;
}

const text = (v: string | undefined) => (v === undefined ? undefined : v.trim() === "" ? null : v);

/** The host of a domain as stored on accounts (`d`, an SQL expression), without the port a server may have. */
const hostOf = (d: SQL) => sql`(CASE WHEN instr(${d}, ':') > 0 THEN rtrim(rtrim(${d}, '0123456789'), ':') ELSE ${d} END)`;

/**
 * Accounts of `domain` and its subdomains (Mastodon's Account.by_domain_and_subdomains), found through the domains
 * accounts are stored on (knownDomainsCte), then the matching domains' accounts by accounts_domain. Subdomains are not
 * one range of the index, so matching the accounts themselves scanned every account, once per round of a block's
 * application: rows read in proportion to the servers known instead of their accounts (a blocklist of hundreds of
 * domains, pushed through the admin API, repeats it).
 */
export function accountsOfDomain(domain: string): SQL {
  // Account domains keep a port when their server has one (127.0.0.1:3000); a block names the host on any port.
  const host = hostOf(sql`known.d`);
  const sub = `.${domain}`;
  return sql`${accounts.domain} IN (${knownDomainsCte}
    SELECT known.d FROM known WHERE known.d IS NOT NULL AND (known.d = ${domain} OR substr(known.d, -${sub.length}) = ${sub}
      OR (instr(known.d, ':') > 0 AND (${host} = ${domain} OR substr(${host}, -${sub.length}) = ${sub}))))`;
}

/** The host of an account's domain, lowercased, without its port (as accountsOfDomain compares it). */
const accountHost = lazy(() => hostOf(sql`lower(${accounts.domain})`));

/**
 * Whether some domain block with reject_media covers the account's domain or a parent domain (domainBlockFor's
 * match), as SQL over `accounts`: what accounts.reject_media should hold.
 */
export const rejectMediaNow = lazy(
  () => sql`(${accounts.domain} IS NOT NULL AND EXISTS (SELECT 1 FROM domain_blocks rb WHERE rb.reject_media = 1
  AND (${accountHost()} = rb.domain OR substr(${accountHost()}, -length(rb.domain) - 1) = '.' || rb.domain)))`,
);

/**
 * One bounded round of bringing accounts.reject_media in step for the accounts of `domain` and its subdomains: at
 * most DOMAIN_BLOCK_ROUND accounts whose mark differs from the blocks now stored; returns their ids.
 */
function rejectMediaRoundStatement(db: DB, domain: string) {
  return db
    .update(accounts)
    .set({ rejectMedia: sql`${rejectMediaNow()}`, updatedAt: Date.now() })
    .where(
      inArray(
        accounts.id,
        db
          .select({ id: accounts.id })
          .from(accounts)
          .where(and(accountsOfDomain(domain), sql`${accounts.rejectMedia} IS NOT ${rejectMediaNow()}`))
          .limit(DOMAIN_BLOCK_ROUND),
      ),
    )
    .returning({ id: accounts.id });
}

/** Lifts what a block did to its domain's accounts: those whose silenced_at / suspended_at is the block's created_at. */
function undoStatements(db: DB, block: DomainBlockRow, undo: { silence: boolean; suspend: boolean }, now: number): Statement[] {
  const stmts: Statement[] = [];
  const d = accountsOfDomain(block.domain);
  if (undo.silence) {
    stmts.push(
      db
        .update(accounts)
        .set({ silencedAt: null, updatedAt: now })
        .where(and(d, eq(accounts.silencedAt, block.createdAt))),
    );
  }
  if (undo.suspend) {
    stmts.push(
      db
        .update(accounts)
        .set({ suspendedAt: null, suspensionOrigin: null, updatedAt: now })
        .where(and(d, eq(accounts.suspendedAt, block.createdAt))),
    );
  }
  return stmts;
}

export async function createDomainBlock(db: DB, fx: Effects, staff: Staff, input: DomainBlockInput): Promise<DomainBlockRow> {
  const domain = requiredDomain(input.domain);
  const now = Date.now();
  const row: DomainBlockRow = {
    id: snowflake(now),
    domain,
    severity: checkSeverity(input.severity) ?? "silence",
    rejectMedia: input.rejectMedia ?? false,
    rejectReports: input.rejectReports ?? false,
    privateComment: text(input.privateComment) ?? null,
    publicComment: text(input.publicComment) ?? null,
    obfuscate: input.obfuscate ?? false,
    createdAt: now,
  };
  // A subdomain of a blocked domain may get its own block only when it is stricter (mastodon#30119).
  const existing = await ruleFor(db, domain);
  if (existing && (existing.domain === domain || !stricterThan(row, existing))) throw new DomainBlockConflict(existing);
  try {
    await table.insert(db, staff, row, fx, (fx) => {
      if (row.severity !== "noop" || row.rejectMedia) fx.add({ type: "domain_block_apply", domainBlockId: row.id });
    });
  } catch (e) {
    // Created at the same moment by someone else.
    const again = isUnique(e) ? await ruleFor(db, domain) : undefined;
    if (again) throw new DomainBlockConflict(again);
    throw e;
  }
  return row;
}

export async function updateDomainBlock(db: DB, fx: Effects, staff: Staff, id: string, input: DomainBlockInput): Promise<DomainBlockRow> {
  const old = await getDomainBlock(db, id);
  const severity = checkSeverity(input.severity) ?? (old.severity as Severity);
  const next: DomainBlockRow = {
    ...old,
    severity,
    rejectMedia: input.rejectMedia ?? old.rejectMedia,
    rejectReports: input.rejectReports ?? old.rejectReports,
    privateComment: text(input.privateComment) === undefined ? old.privateComment : (text(input.privateComment) ?? null),
    publicComment: text(input.publicComment) === undefined ? old.publicComment : (text(input.publicComment) ?? null),
    obfuscate: input.obfuscate ?? old.obfuscate,
  };
  const now = Date.now();
  const changed = severity !== old.severity;
  await commit(
    db,
    fx,
    [
      // BlockDomainService#process_retroactive_updates: a changed severity first lifts what the old one imposed.
      ...(changed ? undoStatements(db, old, { silence: severity !== "silence", suspend: severity !== "suspend" }, now) : []),
      db
        .update(domainBlocks)
        .set({
          severity: next.severity,
          rejectMedia: next.rejectMedia,
          rejectReports: next.rejectReports,
          privateComment: next.privateComment,
          publicComment: next.publicComment,
          obfuscate: next.obfuscate,
        })
        .where(eq(domainBlocks.id, id)),
      adminLogStatement(db, staff, "update", "DomainBlock", id, now),
    ],
    (fx) => {
      if (next.severity !== "noop" || next.rejectMedia !== old.rejectMedia) fx.add({ type: "domain_block_apply", domainBlockId: id });
    },
  );
  return next;
}

/** UnblockDomainService: unsilences / unsuspends the accounts the block limited, then removes it. */
export async function deleteDomainBlock(db: DB, fx: Effects, staff: Staff, id: string): Promise<void> {
  const block = await getDomainBlock(db, id);
  const now = Date.now();
  await commit(
    db,
    fx,
    [
      ...undoStatements(db, block, { silence: block.severity !== "noop", suspend: block.severity === "suspend" }, now),
      adminLogStatement(db, staff, "destroy", "DomainBlock", id, now),
      db.delete(domainBlocks).where(eq(domainBlocks.id, id)),
    ],
    (fx) => {
      // Its accounts' media come back (unless another block with reject_media still covers them).
      if (block.rejectMedia) fx.add({ type: "domain_block_apply", domainBlockId: id, domain: block.domain });
    },
  );
}

/**
 * JOBS `domain_block_apply`: one round of a block's effect on its domain's accounts (at most DOMAIN_BLOCK_ROUND
 * accounts, one read and one batch); records the next round while accounts are left. A block lifted or changed in the
 * meantime is read afresh each round, so a stale round does nothing wrong. Each round also brings accounts.reject_media
 * in step for the block's domain (`domain`: the domain of a block lifted since, or of one whose reject_media changed).
 */
export async function applyDomainBlockRound(db: DB, fx: Effects, domainBlockId: string, lifted?: string): Promise<void> {
  const [block] = await db.select().from(domainBlocks).where(eq(domainBlocks.id, domainBlockId)).limit(1);
  const domain = block?.domain ?? lifted;
  if (!domain) return;
  const media = rejectMediaRoundStatement(db, domain);
  const again = () => fx.add({ type: "domain_block_apply", domainBlockId, ...(lifted ? { domain: lifted } : {}) });
  if (!block || (block.severity !== "silence" && block.severity !== "suspend")) {
    const [marked] = await runBatch(db, [media]);
    if ((marked as unknown[]).length === DOMAIN_BLOCK_ROUND) again();
    return;
  }
  const suspend = block.severity === "suspend";
  const col = suspend ? accounts.suspendedAt : accounts.silencedAt;
  const picked = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(accountsOfDomain(block.domain), isNull(col)))
    .limit(DOMAIN_BLOCK_ROUND);
  if (!picked.length) {
    const [marked] = await runBatch(db, [media]);
    if ((marked as unknown[]).length === DOMAIN_BLOCK_ROUND) again();
    return;
  }
  const ids = picked.map((r) => r.id);
  const list = idList(ids);
  const now = Date.now();
  const mark = suspend
    ? db
        .update(accounts)
        .set({ suspendedAt: block.createdAt, suspensionOrigin: "local", updatedAt: now })
        .where(and(inArray(accounts.id, list), isNull(accounts.suspendedAt)))
    : db
        .update(accounts)
        .set({ silencedAt: block.createdAt, updatedAt: now })
        .where(and(inArray(accounts.id, list), isNull(accounts.silencedAt)));
  let marked: unknown[];
  if (!suspend) {
    [, marked] = (await runBatch(db, [mark, media])) as [unknown, unknown[]];
  } else {
    const json = JSON.stringify(ids.map(padId));
    const authored = sql`(SELECT id FROM statuses WHERE account_id IN (SELECT value FROM json_each(${json})))`;
    const [, , cut, , , m] = await db.batch([
      mark,
      // Their statuses leave home and list feeds now; nothing puts them back when the block is lifted.
      batchable(db, db.run(sql`DELETE FROM home_feed WHERE status_id IN ${authored}`)),
      db
        .delete(follows)
        .where(or(inArray(follows.accountId, list), inArray(follows.targetAccountId, list)))
        .returning({ accountId: follows.accountId, targetAccountId: follows.targetAccountId }),
      db.delete(followRequests).where(or(inArray(followRequests.accountId, list), inArray(followRequests.targetAccountId, list))),
      batchable(db, db.run(sql`DELETE FROM list_feed WHERE status_id IN ${authored}`)),
      media,
    ]);
    marked = m;
    const picked = new Set(ids);
    const locals = [...new Set(cut.flatMap((f) => [f.accountId, f.targetAccountId]).filter((a) => !picked.has(a)))];
    // Relationships of the local side changed: their open streams re-read what they cache.
    if (locals.length) fx.add({ type: "relations_changed", accountIds: locals.slice(0, 500) });
  }
  if (ids.length === DOMAIN_BLOCK_ROUND || marked.length === DOMAIN_BLOCK_ROUND) again();
}
