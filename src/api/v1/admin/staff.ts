// Shared by the admin routes: a resource's router and its read and write guards, the acting staff member, one listing page
// (Mastodon's admin lists: newest first, limit 100 by default and at most 200, Link headers with max_id / min_id),
// and the list, show and delete routes of the block resources.
import { routeGroup } from "../../../route-group";
import type { RouteGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import type { DB } from "../../../db/client";
import { readPage, setLinkHeader, type Page } from "../../../lib/http/pagination";
import { pathId, readParams } from "../../../lib/http/params";
import type { Permission } from "../../../lib/security/permissions";
import { me, requireStaff } from "../../../oauth/guard";
import type { Moderator } from "../../../services/admin/accounts";
import type { Staff } from "../../../services/admin/log";

/**
 * The guards of one admin resource: the role must hold `permission`, the token `admin:read:<resource>` (read) or
 * `admin:write:<resource>` (write); without a resource, plain admin:read / admin:write.
 */
export function staffGuards(permission: Permission, resource?: string) {
  const scope = (access: "read" | "write") => (resource ? `admin:${access}:${resource}` : `admin:${access}`);
  return { read: requireStaff(permission, scope("read")), write: requireStaff(permission, scope("write")) };
}

/** The router of one admin resource, with its guards (as `staffGuards`). */
export const staffRouter = (permission: Permission, resource?: string) => ({ r: routeGroup(), ...staffGuards(permission, resource) });

export const staff = (c: Ctx): Staff => ({ accountId: me(c).account.id });

/** The acting staff member with their role, for the actions whose rules depend on it (accounts, reports, trends). */
export function moderator(c: Ctx): Moderator {
  const v = me(c);
  return { accountId: v.account.id, role: v.role };
}

export async function adminPage<T extends { id: string }>(c: Ctx, load: (page: Page) => Promise<T[]>): Promise<T[]> {
  const page = readPage(await readParams(c), 100, 200);
  const rows = await load(page);
  setLinkHeader(c, rows[0]?.id, rows.at(-1)?.id, rows.length === page.limit);
  return rows;
}

/** GET / (a listing page), GET /:id and DELETE /:id of an admin block resource (each row rendered by `render`). */
export function listShowDelete<T extends { id: string }>(
  r: RouteGroup,
  o: {
    guards: Pick<ReturnType<typeof staffGuards>, "read" | "write">;
    page: (db: DB, page: Page) => Promise<T[]>;
    get: (db: DB, id: string) => Promise<T>;
    remove: (db: DB, staff: Staff, id: string) => Promise<void>;
    render: (row: T) => object;
  },
) {
  const { read, write } = o.guards;
  r.get("/", read, async (c) => c.json((await adminPage(c, (page) => o.page(c.get("db"), page))).map((row) => o.render(row))));
  r.get("/:id", read, async (c) => c.json(o.render(await o.get(c.get("db"), pathId(c)))));
  r.delete("/:id", write, async (c) => {
    await o.remove(c.get("db"), staff(c), pathId(c));
    return c.json({});
  });
}
