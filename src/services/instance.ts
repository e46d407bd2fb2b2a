// What the instance documents are made of: admin settings over env defaults, rules, the contact account and usage
// counts. Each document is read in ONE D1 batch (clients fetch /api/v2/instance on every start-up).
import { and, asc, desc, eq, isNull, or, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, customEmojis, domainBlocks, instanceSettings, rules, statuses, userRoles, users } from "../db/schema";
import type { AccountRow, RoleRow } from "../db/schema";
import { ROLE_IDS } from "../lib/permissions";
import type { Env } from "../env";
import { vapidPublicKey, vapidRowQuery } from "../push/keys";

/**
 * Keys of instance_settings this module reads (the admin helper writes them). Missing keys fall back to env config.
 * Timestamps of long texts are stored under `<key>_updated_at` (ms).
 */
export const SETTING = {
  title: "site_title",
  shortDescription: "site_short_description",
  description: "site_description",
  extendedDescription: "site_extended_description",
  contactEmail: "site_contact_email",
  privacyPolicy: "site_privacy_policy",
  termsOfService: "site_terms_of_service",
  registrationsMessage: "registrations_message",
  statusPageUrl: "status_page_url",
  /** all | users | disabled (Mastodon's show_domain_blocks). */
  showDomainBlocks: "show_domain_blocks",
} as const;

export type Settings = Record<string, string>;
export type RuleRow = typeof rules.$inferSelect;

export const ACTIVE_MONTH_MS = 30 * 24 * 3600 * 1000;
export const ACTIVE_HALFYEAR_MS = 180 * 24 * 3600 * 1000;

/** Last sign of life of a user: the later of last activity and last sign-in. */
const lastSeen = sql`max(coalesce(${users.lastActiveAt}, 0), coalesce(${users.currentSignInAt}, 0))`;

export function settingsQuery(db: DB) {
  return db.select({ key: instanceSettings.key, value: instanceSettings.value }).from(instanceSettings);
}

export function toSettings(rows: { key: string; value: string }[]): Settings {
  const out: Settings = {};
  for (const r of rows) out[r.key] = r.value;
  return out;
}

function rulesQuery(db: DB) {
  return db.select().from(rules).orderBy(asc(rules.priority), asc(rules.id));
}

/**
 * The contact account: the owner (role 3), else the first admin; never a suspended one. Role columns are aliased:
 * D1 batches return rows as objects, so two columns with one name (id, created_at) would overwrite each other.
 */
function contactQuery(db: DB) {
  return db
    .select({
      account: accounts,
      roleId: users.roleId,
      roleName: sql<string>`${userRoles.name}`.as("role_name"),
      roleColor: sql<string>`${userRoles.color}`.as("role_color"),
      roleHighlighted: sql<number>`${userRoles.highlighted}`.as("role_highlighted"),
    })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .leftJoin(userRoles, eq(userRoles.id, users.roleId))
    .where(and(or(eq(users.roleId, ROLE_IDS.owner), eq(users.roleId, ROLE_IDS.admin)), isNull(accounts.suspendedAt), eq(users.disabled, false)))
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

export function activeSinceQuery(db: DB, since: number) {
  return db.select({ n: sql<number>`count(*)` }).from(users).where(sql`${lastSeen} >= ${since}`);
}

/** Users that count: approved, not disabled, account not suspended (Mastodon's User.confirmed without suspended). */
export function userCountQuery(db: DB) {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(users.approved, true), isNull(accounts.suspendedAt)));
}

export function localPostsQuery(db: DB) {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(statuses)
    .where(and(eq(statuses.local, true), isNull(statuses.reblogOfId)));
}

function domainCountQuery(db: DB) {
  return db.select({ n: sql<number>`count(*)` }).from(sql`(SELECT domain FROM instances UNION SELECT domain FROM accounts WHERE domain IS NOT NULL)`);
}

export interface InstanceData {
  settings: Settings;
  rules: RuleRow[];
  contact: { account: AccountRow; role: RoleRow | null } | null;
  activeMonth: number;
  /** The VAPID public key push subscriptions are made with ("" only when it could not be made: no env given). */
  vapidPublicKey: string;
}

/**
 * Everything /api/v2/instance needs, in one round trip. With `env`, a VAPID pair is made on the first call when the
 * operator set none (src/push/keys.ts), so clients see push as available on a fresh deploy.
 */
export async function loadInstanceV2(db: DB, env?: Env): Promise<InstanceData> {
  const now = Date.now();
  const [s, r, c, a, v] = await db.batch([settingsQuery(db), rulesQuery(db), contactQuery(db), activeSinceQuery(db, now - ACTIVE_MONTH_MS), vapidRowQuery(db)]);
  const vapid = env ? await vapidPublicKey(db, env, v[0] ?? null) : (v[0]?.publicKey ?? "");
  return { settings: toSettings(s), rules: r, contact: toContact(c[0]), activeMonth: Number(a[0]?.n ?? 0), vapidPublicKey: vapid };
}

export interface InstanceV1Data extends InstanceData {
  userCount: number;
  statusCount: number;
  domainCount: number;
}

/** Everything /api/v1/instance needs, in one round trip. */
export async function loadInstanceV1(db: DB): Promise<InstanceV1Data> {
  const now = Date.now();
  const [s, r, c, a, u, p, d] = await db.batch([
    settingsQuery(db),
    rulesQuery(db),
    contactQuery(db),
    activeSinceQuery(db, now - ACTIVE_MONTH_MS),
    userCountQuery(db),
    localPostsQuery(db),
    domainCountQuery(db),
  ]);
  return {
    settings: toSettings(s),
    rules: r,
    contact: toContact(c[0]),
    activeMonth: Number(a[0]?.n ?? 0),
    vapidPublicKey: "", // Mastodon's v1 document has no VAPID key
    userCount: Number(u[0]?.n ?? 0),
    statusCount: Number(p[0]?.n ?? 0),
    domainCount: Number(d[0]?.n ?? 0),
  };
}

export async function loadSettings(db: DB): Promise<Settings> {
  return toSettings(await settingsQuery(db));
}

export async function loadRules(db: DB): Promise<RuleRow[]> {
  return rulesQuery(db);
}

/** Known remote domains: the instances table plus every domain an account was seen on. */
export async function listPeers(db: DB): Promise<string[]> {
  const rows = await db.all<{ domain: string }>(sql`SELECT domain FROM instances UNION SELECT domain FROM accounts WHERE domain IS NOT NULL ORDER BY domain`);
  return rows.map((r) => r.domain);
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
        and(eq(statuses.local, true), isNull(statuses.reblogOfId), sql`${statuses.visibility} IN ('public','unlisted')`, sql`${statuses.createdAt} >= ${from}`),
      )
      .groupBy(sql`1`),
    db
      .select({ b: bucket(lastSeen), n: sql<number>`count(*)` })
      .from(users)
      .where(sql`${lastSeen} >= ${from}`)
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

export type DomainBlockRow = typeof domainBlocks.$inferSelect;

/** Domain blocks with limitations users would notice (Mastodon's with_user_facing_limitations). */
export async function publicDomainBlocks(db: DB): Promise<DomainBlockRow[]> {
  return db
    .select()
    .from(domainBlocks)
    .where(or(sql`${domainBlocks.severity} IN ('silence','suspend')`, eq(domainBlocks.rejectMedia, true)))
    .orderBy(asc(domainBlocks.domain));
}

export type CustomEmojiRow = typeof customEmojis.$inferSelect;

/** Local, enabled custom emojis (the picker list). */
export async function localCustomEmojis(db: DB): Promise<CustomEmojiRow[]> {
  return db
    .select()
    .from(customEmojis)
    .where(and(isNull(customEmojis.domain), eq(customEmojis.disabled, false)))
    .orderBy(asc(customEmojis.shortcode));
}
