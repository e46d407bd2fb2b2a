// Browser sessions for the HTML pages. The cookie holds a random id; D1 holds only its SHA-256 (a dump cannot be
// replayed as a cookie) and the session's CSRF token. Sessions of disabled or suspended users do not load.
import { and, eq, gt, lt } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, users, webSessions } from "../db/schema/index";
import { randomToken, sha256Hex } from "../lib/crypto";
import type { AccountRow, UserRow } from "../db/schema";

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export interface WebSession {
  idHash: string;
  csrf: string;
  user: UserRow;
  account: AccountRow;
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

export async function loadWebSession(db: DB, id: string | undefined): Promise<WebSession | null> {
  if (!id || id.length > 100) return null;
  const idHash = await sha256Hex(id);
  const rows = await db
    .select({ s: webSessions, user: users, account: accounts })
    .from(webSessions)
    .innerJoin(users, eq(users.id, webSessions.userId))
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(webSessions.idHash, idHash), gt(webSessions.expiresAt, Date.now())))
    .limit(1);
  const r = rows[0];
  if (!r || r.user.disabled || r.account.suspendedAt) return null;
  return { idHash, csrf: r.s.csrfToken, user: r.user, account: r.account };
}

/** Drops expired sessions; for the scheduled job. */
export async function purgeExpiredWebSessions(db: DB, now = Date.now()): Promise<void> {
  await db.delete(webSessions).where(lt(webSessions.expiresAt, now));
}

export async function destroyWebSession(db: DB, idHash: string): Promise<void> {
  await db.delete(webSessions).where(eq(webSessions.idHash, idHash));
}
