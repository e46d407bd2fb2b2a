// IP rules (Mastodon's IpBlock and Admin::IpBlocksController): a network in CIDR form with a severity
// (sign_up_requires_approval, sign_up_block, no_access), an optional expiry and a comment. Every change and its
// audit-log entry are one batch. Matching happens in memory over the unexpired rules (an instance has a handful).
import { eq, gt, isNull, or } from "drizzle-orm";
import type { DB } from "../../../db/client";
import { ipBlocks } from "../../../db/schema";
import { formatNetwork, networkContains, parseNetwork } from "../../../lib/security/cidr";
import { validationFailed } from "../../../lib/http/errors";
import { snowflake } from "../../../lib/text/ids";
import { adminBlockTable, takenAs } from "./block-table";
import { adminLogStatement, type Staff } from "../log";
import type { IpBlockRow } from "../../../db/schema";

/** Weakest first: a client matching several rules gets the strongest. */
export const IP_SEVERITIES = ["sign_up_requires_approval", "sign_up_block", "no_access"] as const;
export type IpSeverity = (typeof IP_SEVERITIES)[number];

/** Rules read when matching a client (more than this many rules is not an instance Tern is for). */
const MAX_RULES = 5000;

export interface IpBlockInput {
  ip?: string;
  severity?: string;
  comment?: string;
  /** Seconds from now; empty clears the expiry. */
  expiresIn?: string;
}

const table = adminBlockTable(ipBlocks, "IpBlock");
export const ipBlocksPage = table.page;
export const getIpBlock = table.get;
export const deleteIpBlock = table.remove;

function network(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!raw.trim()) throw validationFailed("Ip can't be blank");
  const n = parseNetwork(raw);
  if (!n) throw validationFailed("Ip is invalid");
  return formatNetwork(n);
}

function severity(raw: string | undefined): IpSeverity | undefined {
  if (raw === undefined) return undefined;
  if (!raw.trim()) throw validationFailed("Severity can't be blank");
  if (!(IP_SEVERITIES as readonly string[]).includes(raw)) throw validationFailed("Severity is not included in the list");
  return raw as IpSeverity;
}

/** Mastodon's Expireable#expires_in=: a positive number of seconds sets the expiry, blank clears it. */
function expiry(raw: string | undefined, now: number): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === "") return null;
  if (!/^\d{1,10}$/.test(raw.trim()) || Number(raw) <= 0) throw validationFailed("Expires in is invalid");
  return now + Number(raw) * 1000;
}

const taken = takenAs("Ip has already been taken");

export async function createIpBlock(db: DB, staff: Staff, input: IpBlockInput): Promise<IpBlockRow> {
  const ip = network(input.ip ?? "");
  const sev = severity(input.severity ?? "");
  const now = Date.now();
  const row: IpBlockRow = {
    id: snowflake(now),
    ip: ip!,
    severity: sev!,
    comment: (input.comment ?? "").slice(0, 5000),
    expiresAt: expiry(input.expiresIn, now) ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await table.insert(db, staff, row).catch(taken);
  return row;
}

export async function updateIpBlock(db: DB, staff: Staff, id: string, input: IpBlockInput): Promise<IpBlockRow> {
  const old = await getIpBlock(db, id);
  const now = Date.now();
  const expiresAt = expiry(input.expiresIn, now);
  const next: IpBlockRow = {
    ...old,
    ip: network(input.ip) ?? old.ip,
    severity: severity(input.severity) ?? old.severity,
    comment: input.comment === undefined ? old.comment : input.comment.slice(0, 5000),
    expiresAt: expiresAt === undefined ? old.expiresAt : expiresAt,
    updatedAt: now,
  };
  await db
    .batch([
      db
        .update(ipBlocks)
        .set({ ip: next.ip, severity: next.severity, comment: next.comment, expiresAt: next.expiresAt, updatedAt: now })
        .where(eq(ipBlocks.id, id)),
      adminLogStatement(db, staff, "update", "IpBlock", id, now),
    ])
    .catch(taken);
  return next;
}

// ---- enforcement ----

/** The statement reading the unexpired rules (for the caller's batch). */
export const activeIpRulesQuery = (db: DB, now = Date.now()) =>
  db
    .select({ ip: ipBlocks.ip, severity: ipBlocks.severity })
    .from(ipBlocks)
    .where(or(isNull(ipBlocks.expiresAt), gt(ipBlocks.expiresAt, now)))
    .limit(MAX_RULES);

/** The strongest rule among `rules` matching the client address, or null. */
export function strongestIpRule(rules: { ip: string; severity: string }[], clientIp: string | null | undefined): IpSeverity | null {
  if (!clientIp) return null;
  let best = -1;
  for (const r of rules) {
    const rank = (IP_SEVERITIES as readonly string[]).indexOf(r.severity);
    if (rank <= best) continue;
    const n = parseNetwork(r.ip);
    if (n && networkContains(n, clientIp)) best = rank;
  }
  return best < 0 ? null : (IP_SEVERITIES[best] ?? null);
}

/** The strongest unexpired rule matching `clientIp` (one query). */
export async function ipRuleFor(db: DB, clientIp: string | null | undefined): Promise<IpSeverity | null> {
  if (!clientIp) return null;
  return strongestIpRule(await activeIpRulesQuery(db), clientIp);
}
