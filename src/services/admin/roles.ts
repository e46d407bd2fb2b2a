// Staff roles (Mastodon's Admin::RolesController, UserRole and UserRolePolicy): list, create, and edit name, colour,
// position, highlight and permissions. Mastodon's rules: a staff member edits only roles below their own position
// (their own role only in name, colour and highlight), never grants a permission they do not hold, and never sets a
// position above their own. Every change and its admin_action_logs row (target UserRole) are one batch.
import { asc, eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { userRoles } from "../../db/schema";
import type { RoleRow } from "../../db/schema";
import { forbidden, notFound, validationFailed } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import { PERMISSIONS, type Permission } from "../../lib/security/permissions";
import type { Moderator } from "./accounts";
import { logFor } from "./log";

export interface RoleWithCount extends RoleRow {
  users: number;
}

export const ROLE_NAME_MAX = 100;
const ALL_BITS = Object.values(PERMISSIONS).reduce((a, b) => a | b, 0);

export interface RoleInput {
  name?: string;
  color?: string;
  position?: string | number;
  highlighted?: boolean;
  /** Permission names; undefined leaves them unchanged. */
  permissions?: string[];
}

const log = logFor("UserRole");

/**
 * Every role, highest position first, with how many users hold it (one statement). The subquery names the outer table
 * in full: in a one-table select drizzle writes `${userRoles.id}` as a bare "id", which inside the subquery is the
 * user's own id (every count was 0).
 */
export async function listRoles(db: DB): Promise<RoleWithCount[]> {
  const rows = await db
    .select({ role: userRoles, users: sql<number>`(SELECT count(*) FROM users u WHERE u.role_id = "user_roles"."id")` })
    .from(userRoles)
    .orderBy(sql`${userRoles.position} DESC`, asc(userRoles.id));
  return rows.map((r) => ({ ...r.role, users: Number(r.users) }));
}

export async function getRole(db: DB, id: string): Promise<RoleRow> {
  const [row] = await db.select().from(userRoles).where(eq(userRoles.id, id)).limit(1);
  if (!row) throw notFound();
  return row;
}

/** The permission bits of `names`; unknown names are a 422. */
export function permissionBits(names: string[]): number {
  let bits = 0;
  for (const n of names) {
    if (!Object.hasOwn(PERMISSIONS, n)) throw validationFailed(`Permissions include an unknown permission: ${n}`);
    bits |= PERMISSIONS[n as Permission];
  }
  return bits;
}

/** What the actor may grant: everything for an administrator, else their own bits. */
function grantable(actor: Moderator): number {
  const mine = actor.role?.permissions ?? 0;
  return mine & PERMISSIONS.administrator ? ALL_BITS : mine;
}

function checkFields(actor: Moderator, input: RoleInput, old?: RoleRow) {
  const name = (input.name ?? old?.name ?? "").trim();
  if (!name) throw validationFailed("Name can't be blank");
  if (name.length > ROLE_NAME_MAX) throw validationFailed(`Name is too long (maximum is ${ROLE_NAME_MAX} characters)`);
  const color = (input.color ?? old?.color ?? "").trim();
  if (color && !/^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/.test(color)) throw validationFailed("Color must be in hex format (#rrggbb)");
  let position = old?.position ?? 0;
  if (input.position !== undefined && String(input.position).trim() !== "") {
    const s = String(input.position).trim();
    if (!/^-?\d{1,6}$/.test(s)) throw validationFailed("Position is not a number");
    position = Number(s);
  }
  const own = actor.role?.position ?? 0;
  if (position !== old?.position && position > own) throw validationFailed("Position cannot be higher than your own role");
  const permissions = input.permissions === undefined ? (old?.permissions ?? 0) : permissionBits(input.permissions);
  if (permissions !== old?.permissions) {
    const elevated = permissions & ~grantable(actor) & ~(old?.permissions ?? 0);
    if (elevated) throw validationFailed("Permissions cannot include permissions you do not have");
  }
  return { name, color, position, permissions, highlighted: input.highlighted ?? old?.highlighted ?? false };
}

export async function createRole(db: DB, actor: Moderator, input: RoleInput): Promise<RoleRow> {
  const now = Date.now();
  const row: RoleRow = { id: snowflake(now), ...checkFields(actor, input), createdAt: now, updatedAt: now };
  await db.batch([db.insert(userRoles).values(row), log(db, actor, "create", row.id, now)]);
  return row;
}

/** UserRolePolicy#update?: roles below the actor's position; the actor's own role only without permission or position changes. */
export async function updateRole(db: DB, actor: Moderator, id: string, input: RoleInput): Promise<RoleRow> {
  const old = await getRole(db, id);
  const ownRole = actor.role?.id === old.id;
  if (!ownRole && (actor.role?.position ?? 0) <= old.position) throw forbidden();
  const next = checkFields(actor, input, old);
  if (ownRole && (next.permissions !== old.permissions || next.position !== old.position)) {
    throw validationFailed("You cannot change the permissions or position of your own role");
  }
  const now = Date.now();
  await db.batch([
    db
      .update(userRoles)
      .set({ ...next, updatedAt: now })
      .where(eq(userRoles.id, id)),
    log(db, actor, "update", id, now),
  ]);
  return { ...old, ...next, updatedAt: now };
}
