// The signed-in user's role, read once by primary key: the admin pages' guard checks its permissions, and the front
// page links to /admin when it makes the user staff.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { type RoleRow, userRoles } from "../../db/schema";
import { isStaff } from "../../lib/permissions";

export async function roleOf(db: DB, roleId: string | null): Promise<RoleRow | null> {
  if (!roleId) return null;
  const [role] = await db.select().from(userRoles).where(eq(userRoles.id, roleId)).limit(1);
  return role ?? null;
}

export async function isStaffUser(db: DB, roleId: string | null): Promise<boolean> {
  return isStaff((await roleOf(db, roleId))?.permissions);
}
