// "Forgot your password?" (Mastodon's /auth/password, Devise's recoverable): a link to the address, working once for 6
// hours, then a new password that ends every session and token as a password change does
// (src/services/auth/password-change.ts). The request's answer is the same whether the address belongs to an
// account or not; the caller limits requests per IP and per address (src/http/rate-limit.ts).
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { users } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { ApiError } from "../../lib/http/errors";
import { hashPassword } from "../../lib/security/crypto";
import { claimLinkStatements, findLink, isLinkAlreadyUsed, issueLink } from "./email-links";
import { normalizeEmail, passwordProblem } from "../accounts/local-accounts";
import { signOutEverywhereStatements } from "./password-change";

/** Thrown for a reset link that is unknown, used, replaced or expired (one answer for all four). */
export const linkInvalid = () => new ApiError(422, "This link is invalid or has expired. Ask for a new one.");

/**
 * "Forgot your password?" for `rawEmail`: records a `password_reset` effect, and nothing else, whatever the address,
 * so the answer takes the same time for an account's address and a stranger's; the job looks the address up and mails
 * a link if it is an account's (src/mail/run.ts runPasswordReset). No mail binding: nothing is recorded (the page says
 * mail is off).
 */
export function requestPasswordReset(fx: Effects, env: Pick<Env, "EMAIL">, rawEmail: string): void {
  if (!env.EMAIL) return;
  const email = normalizeEmail(rawEmail);
  if (email) fx.add({ type: "password_reset", origin: fx.origin, email });
}

/**
 * The job's half: the user signing in with `email` (Devise looks it up case-insensitively), and a new reset link for
 * them (replacing any older one), written; null when the address is nobody's.
 */
export async function issuePasswordResetLink(db: DB, secret: string, email: string): Promise<{ userId: string; email: string; token: string } | null> {
  const rows = await db.select({ id: users.id, email: users.email }).from(users).where(sql`lower(${users.email}) = ${email.toLowerCase()}`).limit(1);
  const user = rows[0];
  if (!user) return null;
  const link = await issueLink(db, secret, user.id, "reset_password", user.email);
  await db.batch(link.stmts as unknown as Parameters<DB["batch"]>[0]);
  return { userId: user.id, email: user.email, token: link.token };
}

/** Whether `token` is a live reset link (the form is shown only for one). */
export async function resetLinkValid(db: DB, token: unknown): Promise<boolean> {
  return (await findLink(db, "reset_password", token)) !== null;
}

/**
 * Sets the new password through a reset link, uses the link up, and signs the account out everywhere. Throws 422 for a
 * bad link or a refused password (the link then still works).
 */
export async function resetPassword(db: DB, fx: Effects, pepper: string, input: { token: unknown; password: unknown; confirmation: unknown }): Promise<void> {
  const link = await findLink(db, "reset_password", input.token);
  if (!link) throw linkInvalid();
  const password = typeof input.password === "string" ? input.password : "";
  const problem = passwordProblem(password);
  if (problem) throw new ApiError(422, `Password ${problem.description}`);
  if (password !== input.confirmation) throw new ApiError(422, "Password confirmation doesn't match Password");
  const now = Date.now();
  const hash = await hashPassword(password, pepper);
  const account = await db.select({ accountId: users.accountId }).from(users).where(eq(users.id, link.userId)).limit(1);
  let results: readonly unknown[];
  try {
    results = await db.batch([
      ...claimLinkStatements(db, link.id, now),
      db.update(users).set({ passwordHash: hash, updatedAt: now }).where(eq(users.id, link.userId)),
      ...signOutEverywhereStatements(db, link.userId, null, now),
    ] as unknown as Parameters<DB["batch"]>[0]);
  } catch (e) {
    if (isLinkAlreadyUsed(e)) throw linkInvalid();
    throw e;
  }
  const revoked = results[results.length - 1] as { id: string }[];
  const accountId = account[0]?.accountId;
  if (accountId) for (const t of revoked) fx.add({ type: "disconnect_streams", accountId, tokenId: t.id });
}
