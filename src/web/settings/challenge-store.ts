// The sign-in page's second step (two-factor code after the password): a random id in an HttpOnly cookie, its SHA-256
// in D1 with the step's own CSRF token and where to go afterwards. Five minutes, five wrong codes, then the password
// is asked again. The pending user is re-read on every use, so a login disabled meanwhile stops here too.
import { eq, sql } from "drizzle-orm";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Ctx } from "../../context";
import type { DB } from "../../db/client";
import { webSignInChallenges } from "../../db/schema";
import { randomToken, sha256Hex } from "../../lib/security/crypto";
import { loadCookieRow } from "../session-store";

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
export const CHALLENGE_MAX_ATTEMPTS = 5;

const isHttps = (c: Ctx) => new URL(c.req.url).protocol === "https:";
const cookieName = (c: Ctx) => (isHttps(c) ? "__Host-tern_otp" : "tern_otp");

export interface SignInChallenge {
  idHash: string;
  csrf: string;
  returnTo: string;
  attempts: number;
  userId: string;
  accountId: string;
  email: string;
}

/** Starts the step; answers the CSRF token its form carries. */
export async function startSignInChallenge(c: Ctx, userId: string, returnTo: string): Promise<string> {
  const db = c.get("db");
  const id = randomToken(32);
  const csrf = randomToken(32);
  const idHash = await sha256Hex(id);
  const now = Date.now();
  await db.batch([
    // One pending step per user at a time, and expired ones cleaned on the way.
    db.delete(webSignInChallenges).where(sql`${webSignInChallenges.userId} = ${userId} OR ${webSignInChallenges.expiresAt} < ${now}`),
    db.insert(webSignInChallenges).values({ idHash, userId, csrfToken: csrf, returnTo, attempts: 0, expiresAt: now + CHALLENGE_TTL_MS }),
  ]);
  setCookie(c, cookieName(c), id, { path: "/", httpOnly: true, sameSite: "Lax", secure: isHttps(c), maxAge: CHALLENGE_TTL_MS / 1000 });
  return csrf;
}

export async function loadSignInChallenge(c: Ctx): Promise<SignInChallenge | null> {
  const r = await loadCookieRow(c.get("db"), webSignInChallenges, getCookie(c, cookieName(c)));
  if (!r) return null;
  const ch = r.row;
  return {
    idHash: r.idHash,
    csrf: ch.csrfToken,
    returnTo: ch.returnTo,
    attempts: ch.attempts,
    userId: ch.userId,
    accountId: r.user.accountId,
    email: r.user.email,
  };
}

/** Counts a wrong code; true when the step is used up (and removed). */
export async function failSignInChallenge(db: DB, ch: SignInChallenge): Promise<boolean> {
  if (ch.attempts + 1 >= CHALLENGE_MAX_ATTEMPTS) {
    await db.delete(webSignInChallenges).where(eq(webSignInChallenges.idHash, ch.idHash));
    return true;
  }
  await db
    .update(webSignInChallenges)
    .set({ attempts: sql`${webSignInChallenges.attempts} + 1` })
    .where(eq(webSignInChallenges.idHash, ch.idHash));
  return false;
}

export async function endSignInChallenge(c: Ctx, idHash: string | null): Promise<void> {
  if (idHash) await c.get("db").delete(webSignInChallenges).where(eq(webSignInChallenges.idHash, idHash));
  deleteCookie(c, cookieName(c), { path: "/", secure: isHttps(c) });
}
