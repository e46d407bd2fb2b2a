// Whether the signed-in user holds a staff role (the front page then links to /admin). One primary-key read, only
// for signed-in users.
import { eq } from "drizzle-orm";
import type { DB } from "../../db/client";
import { userRoles } from "../../db/schema";
import { isStaff } from "../../lib/permissions";

export async function isStaffUser(db: DB, roleId: string | null): Promise<boolean> {
  if (!roleId) return false;
  const [role] = await db.select({ permissions: userRoles.permissions }).from(userRoles).where(eq(userRoles.id, roleId)).limit(1);
  return isStaff(role?.permissions);
}
