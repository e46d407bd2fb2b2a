// Browser sessions for the HTML pages. The cookie holds a random id; D1 holds only its SHA-256 (a dump cannot be
// replayed as a cookie) and the session's CSRF token. Sessions of disabled or suspended users do not load.
import { and, eq, gt } from "drizzle-orm";
import type { DB } from "../db/client";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { accounts, userRoles, users, webSessions, type webSignInChallenges } from "../db/schema/index";
import { randomToken, sha256Hex } from "../lib/security/crypto";
import type { AccountRow, RoleRow, UserRow } from "../db/schema";

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export interface WebSession {
  idHash: string;
  csrf: string;
  user: UserRow;
  account: AccountRow;
  /** The user's role, read with the session (the admin pages' guard, the front page's link to /admin). */
  role: RoleRow | null;
}

export async function createWebSession(db: DB, userId: string): Promise<{ id: string; csrf: string; expiresAt: number }> {
  const id = randomToken(32);
  const csrf = randomToken(32);
  const now = Date.now();
  const expiresAt = now + SESSION_TTL_MS;
  await db.batch([
    db.insert(webSessions).values({ idHash: await sha256Hex(id), userId, csrfToken: csrf, createdAt: now, expiresAt }),
    db.update(users).set({ currentSignInAt: now, lastActiveAt: now }).where(eq(users.id, userId)),
  ]);
  return { id, csrf, expiresAt };
}

/** The tables whose rows a cookie names by the SHA-256 of its random id: browser sessions, pending sign-in steps. */
type CookieTable = typeof webSessions | typeof webSignInChallenges;

/**
 * The unexpired row of `table` that the cookie value `id` names, with its user and account; null when the id is
 * malformed or unknown, the row has expired, or the user's login is disabled or the account suspended.
 */
export async function loadCookieRow<T extends CookieTable>(
  db: DB,
  table: T,
  id: string | undefined,
): Promise<{ idHash: string; row: T["$inferSelect"]; user: UserRow; account: AccountRow; role: RoleRow | null } | null> {
  if (!id || id.length > 100) return null;
  const idHash = await sha256Hex(id);
  // Both tables have these three columns; the cast only lets one query serve either.
  const t = table as SQLiteTable & { idHash: SQLiteColumn; userId: SQLiteColumn; expiresAt: SQLiteColumn };
  const [r] = await db
    .select({ row: t, user: users, account: accounts, role: userRoles })
    .from(t)
    .innerJoin(users, eq(users.id, t.userId))
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .leftJoin(userRoles, eq(userRoles.id, users.roleId))
    .where(and(eq(t.idHash, idHash), gt(t.expiresAt, Date.now())))
    .limit(1);
  if (!r || r.user.disabled || r.account.suspendedAt) return null;
  return { idHash, row: r.row as T["$inferSelect"], user: r.user, account: r.account, role: r.role };
}

export async function loadWebSession(db: DB, id: string | undefined): Promise<WebSession | null> {
  const r = await loadCookieRow(db, webSessions, id);
  return r && { idHash: r.idHash, csrf: r.row.csrfToken, user: r.user, account: r.account, role: r.role };
}

/** Drops expired sessions; for the scheduled job. */
export async function destroyWebSession(db: DB, idHash: string): Promise<void> {
  await db.delete(webSessions).where(eq(webSessions.idHash, idHash));
}
