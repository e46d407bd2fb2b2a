// What the instance documents are made of: admin settings over env defaults, rules, the contact account, custom emojis,
// domain blocks and usage counts, read together in ONE D1 batch (loadInstanceSnapshot) that src/services/instance/instance-cache.ts
// keeps in memory: clients fetch /api/v2/instance on every start-up.
import { and, asc, desc, eq, getTableColumns, isNull, or, sql, type SQL } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";
import type { RunnableQuery } from "drizzle-orm/runnable-query";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DB } from "../../db/client";
import type { InstanceData, InstanceV1Data } from "../../entities/instance/instance";
import { type Settings, settingsQuery, toSettings } from "../../queries/instance/instance-settings";
import { accounts, customEmojis, domainBlocks, instanceSettings, instanceStats, rules, statuses, userRoles, users } from "../../db/schema";
import type { RoleRow } from "../../db/schema";
import { ROLE_IDS } from "../../lib/security/permissions";
import { knownDomainsCte } from "../../db/known-domains";
import { padId, snowflakeFloor } from "../../lib/text/ids";
import { type VapidEnv, vapidPublicKey, vapidRowQuery } from "../../push/keys";
import type { DomainBlockRow, RuleRow } from "../../db/schema";

export { SETTING, registrationsMode, settingsQuery, toSettings, type Settings } from "../../queries/instance/instance-settings";
export type { InstanceData, InstanceV1Data } from "../../entities/instance/instance";

export const ACTIVE_MONTH_MS = 30 * 24 * 3600 * 1000;
export const ACTIVE_HALFYEAR_MS = 180 * 24 * 3600 * 1000;

/** Last sign of life of a user: the later of last activity and last sign-in. */
const lastSeen = lazy(() => sql`max(coalesce(${users.lastActiveAt}, 0), coalesce(${users.currentSignInAt}, 0))`);

/**
 * The parts of the instance documents are read FROM the counter row CROSS JOIN their table, with the generation as a
 * condition on that row: SQLite keeps the left table of a CROSS JOIN as the outer loop, so when the generation is
 * the one given, the statement reads the counter row and never enters the table (a condition on the generation alone,
 * as a subquery, is checked per row instead). "" (never a generation) reads them always.
 */
function generationIsNot(generation: string) {
  return and(eq(instanceStats.id, 1), sql`${instanceStats.generation} IS NOT ${generation}`);
}

function changedSettingsQuery(db: DB, changedSince = "") {
  return db
    .select({ key: instanceSettings.key, value: instanceSettings.value })
    .from(instanceStats)
    .crossJoin(instanceSettings)
    .where(generationIsNot(changedSince));
}

/** A part's statement: batched in loadInstanceSnapshot, or awaited alone; its rows are the table's rows. */
type PartQuery<T extends SQLiteTable> = RunnableQuery<T["$inferSelect"][], "sqlite"> & PromiseLike<T["$inferSelect"][]>;

/**
 * All columns of `table` FROM the counter row CROSS JOIN it (generationIsNot), with a condition and an order.
 * Drizzle's join types cannot be followed through a generic table, so the statement is built on the table as a
 * plain SQLiteTable and typed once here: selecting getTableColumns(table) gives exactly `$inferSelect` rows.
 */
function partQuery<T extends SQLiteTable>(db: DB, table: T, changedSince: string, where: SQL | undefined, ...order: SQL[]): PartQuery<T> {
  const t: SQLiteTable = table;
  const query = db
    .select(getTableColumns(t))
    .from(instanceStats)
    .crossJoin(t)
    .where(and(generationIsNot(changedSince), where))
    .orderBy(...order);
  return query as PartQuery<T>;
}

function rulesQuery(db: DB, changedSince = "") {
  return partQuery(db, rules, changedSince, undefined, asc(rules.priority), asc(rules.id));
}

/**
 * The contact account: the owner (role 3), else the first admin; never a suspended one. Role columns are aliased:
 * D1 batches return rows as objects, so two columns with one name (id, created_at) would overwrite each other.
 */
function contactQuery(db: DB, changedSince = "") {
  return db
    .select({
      account: accounts,
      roleId: users.roleId,
      roleName: sql<string>`${userRoles.name}`.as("role_name"),
      roleColor: sql<string>`${userRoles.color}`.as("role_color"),
      roleHighlighted: sql<number>`${userRoles.highlighted}`.as("role_highlighted"),
    })
    .from(instanceStats)
    .crossJoin(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .leftJoin(userRoles, eq(userRoles.id, users.roleId))
    .where(
      and(
        generationIsNot(changedSince),
        or(eq(users.roleId, ROLE_IDS.owner), eq(users.roleId, ROLE_IDS.admin)),
        isNull(accounts.suspendedAt),
        eq(users.disabled, false),
      ),
    )
    .orderBy(desc(users.roleId), asc(users.id))
    .limit(1);
}

type ContactRow = Awaited<ReturnType<typeof contactQuery>>[number];

function toContact(r: ContactRow | undefined): InstanceData["contact"] {
  if (!r) return null;
  const role: RoleRow | null = r.roleId
    ? {
        id: r.roleId,
        name: r.roleName ?? "",
        color: r.roleColor ?? "",
        highlighted: !!r.roleHighlighted,
        permissions: 0,
        position: 0,
        createdAt: 0,
        updatedAt: 0,
      }
    : null;
  return { account: r.account, role };
}

/** What changes only with `instance_stats.generation` (migrations/0021_instance_stats.sql). */
export interface InstanceParts {
  generation: string;
  settings: Settings;
  rules: RuleRow[];
  contact: InstanceData["contact"];
  emojis: CustomEmojiRow[];
  domainBlocks: DomainBlockRow[];
}

export interface InstanceCounts {
  userCount: number;
  statusCount: number;
  domainCount: number;
  activeMonth: number;
  activeHalfyear: number;
}

/** Everything the instance documents (v1, v2, NodeInfo, rules, custom emojis, texts, domain blocks) are made of. */
export interface InstanceSnapshot {
  parts: InstanceParts;
  counts: InstanceCounts;
  vapidPublicKey: string;
}

function statsQuery(db: DB) {
  return db.select().from(instanceStats).where(eq(instanceStats.id, 1));
}

/**
 * Users seen since `since` (last activity or sign-in), through the two indexes of migration 0021: the same set as
 * `lastSeen >= since`, but the rows read are the active users only.
 */
function activeUsersQuery(db: DB, since: number) {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(users)
    .where(or(sql`${users.lastActiveAt} >= ${since}`, sql`${users.currentSignInAt} >= ${since}`));
}

/**
 * Everything the instance documents need, in ONE round trip. Counts come from the counter row and two indexed counts
 * of active users. The other parts are read only when the generation moved since `prev` (generationIsNot), so an
 * unchanged generation costs the counter row once more per part. No VAPID pair is made here (see ensureVapidKey).
 */
export async function loadInstanceSnapshot(db: DB, env: VapidEnv | undefined, prev: InstanceParts | null, now = Date.now()): Promise<InstanceSnapshot> {
  const since = prev?.generation ?? "";
  const [st, m, h, v, s, r, c, e, d] = await db.batch([
    statsQuery(db),
    activeUsersQuery(db, now - ACTIVE_MONTH_MS),
    activeUsersQuery(db, now - ACTIVE_HALFYEAR_MS),
    vapidRowQuery(db),
    changedSettingsQuery(db, since),
    rulesQuery(db, since),
    contactQuery(db, since),
    customEmojisQuery(db, since),
    domainBlocksQuery(db, since),
  ]);
  const stats = st[0];
  const generation = stats?.generation ?? "";
  const parts: InstanceParts =
    prev && prev.generation === generation && generation !== ""
      ? prev
      : { generation, settings: toSettings(s), rules: r, contact: toContact(c[0]), emojis: e, domainBlocks: d };
  // The operator's key, else the stored one; "" until the first v2 request makes the pair (ensureVapidKey).
  const operatorKey = !!(env?.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY);
  const vapid = env && (v[0] || operatorKey) ? await vapidPublicKey(db, env, v[0] ?? null) : (v[0]?.publicKey ?? "");
  return {
    parts,
    counts: {
      userCount: Number(stats?.userCount ?? 0),
      statusCount: Number(stats?.statusCount ?? 0),
      domainCount: Number(stats?.domainCount ?? 0),
      activeMonth: Number(m[0]?.n ?? 0),
      activeHalfyear: Number(h[0]?.n ?? 0),
    },
    vapidPublicKey: vapid,
  };
}

/**
 * Makes and stores the VAPID pair when the operator set none and none exists yet (src/push/keys.ts), so clients see
 * push as available on a fresh deploy. True when it made one (the snapshot is then stale).
 */
export async function ensureVapidKey(db: DB, env: VapidEnv, s: InstanceSnapshot): Promise<boolean> {
  if (s.vapidPublicKey) return false;
  return (await vapidPublicKey(db, env, null)) !== "";
}

/** The v2 document's data from a snapshot. */
export function instanceV2Data(s: InstanceSnapshot): InstanceData {
  const p = s.parts;
  return { settings: p.settings, rules: p.rules, contact: p.contact, activeMonth: s.counts.activeMonth, vapidPublicKey: s.vapidPublicKey };
}

/** The v1 document's data from a snapshot (Mastodon's v1 document has no VAPID key). */
export function instanceV1Data(s: InstanceSnapshot): InstanceV1Data {
  const c = s.counts;
  return { ...instanceV2Data(s), vapidPublicKey: "", userCount: c.userCount, statusCount: c.statusCount, domainCount: c.domainCount };
}

export async function loadSettings(db: DB): Promise<Settings> {
  return toSettings(await settingsQuery(db));
}

/**
 * Known remote domains: the instances table plus every domain an account was seen on, the latter by a walk of the
 * distinct domains (knownDomainsCte): anyone may ask, and reading every remote account's domain grew with them.
 */
export async function listPeers(db: DB): Promise<string[]> {
  const rows = await db.all<{ domain: string }>(
    sql`${knownDomainsCte} SELECT domain FROM instances UNION SELECT known.d AS domain FROM known WHERE known.d IS NOT NULL ORDER BY domain`,
  );
  return rows.map((r) => r.domain);
}

/**
 * Up to 10 known domains starting with `prefix` (Mastodon's peers search, for the domain block form), ascending: a walk
 * of accounts_domain from one domain to the next from the prefix on, so it reads the domains shown, not their accounts.
 */
export async function searchPeers(db: DB, prefix: string): Promise<string[]> {
  const rows = await db.all<{ d: string }>(sql`WITH RECURSIVE walk(d, n) AS (
      SELECT (SELECT min(a.domain) FROM accounts a WHERE a.domain >= ${prefix}), 1
      UNION ALL SELECT (SELECT min(b.domain) FROM accounts b WHERE b.domain > walk.d), n + 1 FROM walk
        WHERE walk.d IS NOT NULL AND substr(walk.d, 1, ${prefix.length}) = ${prefix} AND n < 10)
    SELECT d FROM walk WHERE d IS NOT NULL AND substr(d, 1, ${prefix.length}) = ${prefix}`);
  return rows.map((r) => r.d);
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

/** Monday 00:00 UTC of the week holding `ms` (Mastodon's ISO weeks). */
export function weekStart(ms: number): number {
  const d = new Date(ms);
  const day = (d.getUTCDay() + 6) % 7; // Monday = 0
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day);
}

export interface WeekActivity {
  week: number; // ms
  statuses: number;
  logins: number;
  registrations: number;
}

/**
 * Weekly local activity for the last 12 weeks, newest first. Statuses exclude private and direct ones (spec) and
 * reblogs. Logins are users last seen within that week: sign-ins are not logged per week, so earlier weeks only
 * count users who have not been back since.
 */
export async function weeklyActivity(db: DB, now = Date.now()): Promise<WeekActivity[]> {
  const current = weekStart(now);
  const from = current - 11 * WEEK_MS;
  const bucket = (col: SQL) => sql<number>`((${col} - ${sql.raw(String(from))}) / ${sql.raw(String(WEEK_MS))})`;
  const [st, lg, rg] = await db.batch([
    db
      .select({ b: bucket(sql`${statuses.createdAt}`), n: sql<number>`count(*)` })
      .from(statuses)
      .where(
        and(
          eq(statuses.local, true),
          isNull(statuses.reblogOfId),
          sql`${statuses.visibility} IN ('public','unlisted')`,
          // A local status's id is made from its creation time: the bound makes statuses_public's range the twelve
          // weeks, where created_at alone let it read every local status ever posted (anyone may ask).
          sql`${statuses.id} >= ${padId(snowflakeFloor(from))}`,
          sql`${statuses.createdAt} >= ${from}`,
        ),
      )
      .groupBy(sql`1`),
    db
      .select({ b: bucket(lastSeen()), n: sql<number>`count(*)` })
      .from(users)
      .where(sql`${lastSeen()} >= ${from}`)
      .groupBy(sql`1`),
    db
      .select({ b: bucket(sql`${users.createdAt}`), n: sql<number>`count(*)` })
      .from(users)
      .where(sql`${users.createdAt} >= ${from}`)
      .groupBy(sql`1`),
  ]);
  const weeks: WeekActivity[] = [];
  for (let i = 0; i < 12; i++) weeks.push({ week: current - i * WEEK_MS, statuses: 0, logins: 0, registrations: 0 });
  const put = (rows: { b: number; n: number }[], key: "statuses" | "logins" | "registrations") => {
    for (const r of rows) {
      const idx = 11 - Math.floor(Number(r.b));
      const week = weeks[idx];
      if (week) week[key] += Number(r.n);
    }
  };
  put(st, "statuses");
  put(lg, "logins");
  put(rg, "registrations");
  return weeks;
}

/** Domain blocks with limitations users would notice (Mastodon's with_user_facing_limitations). */
function domainBlocksQuery(db: DB, changedSince = "") {
  const userFacing = or(sql`${domainBlocks.severity} IN ('silence','suspend')`, eq(domainBlocks.rejectMedia, true));
  return partQuery(db, domainBlocks, changedSince, userFacing, asc(domainBlocks.domain));
}

export type CustomEmojiRow = typeof customEmojis.$inferSelect;

/** Local, enabled custom emojis (the picker list). */
function customEmojisQuery(db: DB, changedSince = "") {
  return partQuery(db, customEmojis, changedSince, and(isNull(customEmojis.domain), eq(customEmojis.disabled, false)), asc(customEmojis.shortcode));
}
