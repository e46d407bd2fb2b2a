// Who may use the admin pages, and the POST-redirect-GET flash. A page needs the browser session of the sign-in pages
// (src/web/session.ts), a user whose role holds any permission (staff), and the permission of its section (the same
// as its API's requireStaff). Every POST also needs the session's CSRF token (and a same-origin Origin when one is
// sent). Signed-out GETs go to the sign-in page and come back; everything else refused is a 403 page.
import { createMiddleware } from "hono/factory";
import type { AppEnv, Ctx } from "../../context";
import type { RoleRow } from "../../db/schema";
import { ApiError } from "../../lib/http/errors";
import { readParams, type Params } from "../../lib/http/params";
import { hasPermission, isStaff, type Permission } from "../../lib/security/permissions";
import type { Moderator } from "../../services/admin/accounts";
import type { WebSession } from "../session-store";
import { MessagePage } from "../auth-pages";
import { page } from "../layout";
import { currentSession, sessionCsrfValid } from "../session";

/** Largest admin POST: the thumbnail (8 MB) in a multipart body. Form bodies stay at 1 MB (readParams). */
export const ADMIN_BODY_LIMIT = 9 * 1024 * 1024;

export interface AdminSession {
  session: WebSession;
  role: RoleRow | null;
  /** The actor as services take it. */
  moderator: Moderator;
  /** The parsed form of a POST (CSRF already checked). */
  form: Params;
}

const sessions = new WeakMap<Request, AdminSession>();

/** The admin session of this request (after requireStaffSession). */
export function adminOf(c: Ctx): AdminSession {
  const s = sessions.get(c.req.raw);
  if (!s) throw new Error("admin route without requireStaffSession");
  return s;
}

export type Refusal = "forbidden" | "csrf" | "bad_request" | "not_found";

const REFUSALS: Record<Refusal, [string, string]> = {
  forbidden: ["Not allowed", "You are not allowed to see this page."],
  csrf: ["Request refused", "The form could not be verified (missing or invalid CSRF token, or a cross-site request). Go back, reload the page and try again."],
  bad_request: ["Request refused", "The form could not be read."],
  not_found: ["Not found", "There is no such page."],
};

export async function refuse(c: Ctx, kind: Refusal, status: 400 | 403 | 404 | 413, message?: string): Promise<Response> {
  const [title, text] = REFUSALS[kind];
  const res = await page(c, <MessagePage siteTitle={c.get("config").title} title={title} message={message ?? text} />, status === 413 ? 400 : status);
  return status === 413 ? new Response(res.body, { status, headers: res.headers }) : res;
}

export const requireStaffSession = createMiddleware<AppEnv>(async (c, next) => {
  const session = await currentSession(c);
  const isGet = c.req.method === "GET" || c.req.method === "HEAD";
  if (!session) {
    if (!isGet) return refuse(c, "forbidden", 403, "You are not signed in.");
    const u = new URL(c.req.url);
    return c.redirect(`/auth/sign_in?return_to=${encodeURIComponent(u.pathname + u.search)}`, 303);
  }
  const role = session.role;
  if (!isStaff(role?.permissions)) return refuse(c, "forbidden", 403);
  let form: Params = {};
  if (!isGet) {
    try {
      form = await readParams(c, ADMIN_BODY_LIMIT);
    } catch (e) {
      if (e instanceof ApiError) return refuse(c, "bad_request", e.status === 413 ? 413 : 400, e.message);
      throw e;
    }
    if (!sessionCsrfValid(c, session, form.csrf)) return refuse(c, "csrf", 403);
  }
  sessions.set(c.req.raw, { session, role, moderator: { accountId: session.account.id, role }, form });
  await next();
});

/** A section's permission; 403 without it. */
export const requirePermission = (p: Permission) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (!hasPermission(adminOf(c).role?.permissions, p)) return refuse(c, "forbidden", 403);
    await next();
  });
