// Per-route authorisation: a missing/invalid token is 401, a token without the scope is 403, an app token on a user
// route is 422 (Mastodon), a user whose login is not functional is 403. Every route declares its scope here.
import { createMiddleware } from "hono/factory";
import type { AppEnv, Ctx } from "../context";
import { ApiError, forbidden, unauthorized, wrongScope } from "../lib/http/errors";
import { hasPermission, type Permission } from "../lib/security/permissions";
import { scopeAllows } from "./scopes";
import type { UserViewer, Viewer } from "../db/viewer";

export type { UserViewer } from "../db/viewer";

function checkScope(v: Viewer, scopes: string[]) {
  if (scopes.length && !scopes.some((s) => scopeAllows(v.scopes, s))) throw wrongScope();
}

/** A user whose login works, approved or not yet (an app token is 422, a disabled or suspended login 403). */
function assertLoginWorks(v: Viewer): asserts v is UserViewer {
  if (!v.user || !v.account) throw new ApiError(422, "This method requires an authenticated user");
  if (v.user.disabled || v.account.suspendedAt) throw forbidden("Your login is currently disabled");
}

export function assertFunctional(v: Viewer): asserts v is UserViewer {
  assertLoginWorks(v);
  if (!v.user.approved) throw forbidden("Your login is currently pending approval");
}

/** A user token with one of `scopes` (any of them suffices). */
export const requireUser = (...scopes: string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const v = c.get("viewer");
    if (!v) throw c.get("invalidToken") ? unauthorized() : unauthorized("This API requires an authenticated user");
    checkScope(v, scopes);
    assertFunctional(v);
    await next();
  });

/**
 * A user token with one of `scopes`, whose sign-up may still wait for approval or confirmation: what such a user may
 * already do (the e-mail confirmation endpoints, usable right after sign-up).
 */
export const requireSignedUpUser = (...scopes: string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const v = c.get("viewer");
    if (!v) throw unauthorized();
    checkScope(v, scopes);
    assertLoginWorks(v);
    await next();
  });

/**
 * After `requireUser`: 403 unless the token holds EVERY one of `scopes` (requireUser asks for any one). For what spans
 * several resources at once, such as an import that follows the accounts it adds to lists.
 */
export function requireEveryScope(c: Ctx, scopes: readonly string[]): void {
  const v = c.get("viewer");
  if (!v) throw unauthorized();
  if (!scopes.every((s) => scopeAllows(v.scopes, s))) throw wrongScope();
}

/** Public routes that check a token's scope when one is sent (Mastodon's `authorize_if_got_token!`). */
export const scopeIfToken = (...scopes: string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const v = c.get("viewer");
    if (v) checkScope(v, scopes);
    await next();
  });

/** Any token (user or app) with one of `scopes`. */
export const requireToken = (...scopes: string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const v = c.get("viewer");
    if (!v) throw unauthorized();
    checkScope(v, scopes);
    await next();
  });

/** Staff routes: user token with scope, and a role holding `permission` (403 "wrong role" otherwise, B17). */
export const requireStaff = (permission: Permission, ...scopes: string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const v = c.get("viewer");
    if (!v) throw unauthorized();
    checkScope(v, scopes);
    assertFunctional(v);
    if (!hasPermission(v.role?.permissions, permission)) throw forbidden();
    await next();
  });

/** The signed-in user (after requireUser). */
export function me(c: Ctx): UserViewer {
  const v = c.get("viewer");
  if (!v?.user || !v.account) throw unauthorized("This API requires an authenticated user");
  return v as UserViewer;
}

/** The viewer's account id when a functional user token is present, else null (public routes). */
export function viewerAccountId(c: Ctx): string | null {
  const v = c.get("viewer");
  return v?.account && v.user && !v.user.disabled && !v.account.suspendedAt ? v.account.id : null;
}
