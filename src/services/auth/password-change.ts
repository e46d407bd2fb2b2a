// Changing the password from the settings (Mastodon's Auth::RegistrationsController#update with the current password).
// Sign-up's rules apply to the new one. Mastodon then ends the user's other browser sessions (clear_other_sessions)
// and the tokens bound to them; Tern goes as far as Mastodon's password reset does: every other browser session and
// every access token is revoked (a stolen password may have minted tokens through the password grant), their open
// streams are closed at once, and only the browser session that made the change stays signed in.
import { and, eq, isNull, ne } from "drizzle-orm";
import type { DB } from "../../db/client";
import { oauthAccessGrants, oauthAccessTokens, users, webSessions, webSignInChallenges, type UserRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { ApiError } from "../../lib/http/errors";
import { hashPassword } from "../../lib/security/crypto";
import type { CheckCredentials } from "./credential-types";
import { passwordProblem } from "../accounts/local-accounts";

export interface PasswordChange {
  current: unknown;
  password: unknown;
  confirmation: unknown;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

/**
 * What a password change or reset ends: every web session but `keepSessionHash`'s, pending sign-in steps, unused
 * authorization codes, and every live access token (the last statement returns the revoked tokens' ids, whose streams
 * the caller closes with `disconnect_streams`).
 */
export function signOutEverywhereStatements(db: DB, userId: string, keepSessionHash: string | null, now: number) {
  return [
    db
      .delete(webSessions)
      .where(keepSessionHash ? and(eq(webSessions.userId, userId), ne(webSessions.idHash, keepSessionHash)) : eq(webSessions.userId, userId)),
    db.delete(webSignInChallenges).where(eq(webSignInChallenges.userId, userId)),
    db.delete(oauthAccessGrants).where(eq(oauthAccessGrants.userId, userId)),
    db
      .update(oauthAccessTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthAccessTokens.userId, userId), isNull(oauthAccessTokens.revokedAt)))
      .returning({ id: oauthAccessTokens.id }),
  ] as const;
}

export async function changePassword(
  db: DB,
  fx: Effects,
  pepper: string,
  /** The current password's check (src/oauth/credentials.ts), made after the new password's rules. */
  check: CheckCredentials,
  who: { user: UserRow; accountId: string },
  input: PasswordChange,
  /** The browser session that asks (kept signed in). */
  keepSessionHash: string | null,
): Promise<void> {
  // The new password's rules first: a refused new password must not tell whether the current one was right.
  const password = str(input.password);
  const problem = passwordProblem(password);
  if (problem) throw new ApiError(422, `Password ${problem.description}`);
  if (password !== str(input.confirmation)) throw new ApiError(422, "Password confirmation doesn't match Password");
  if (!(await check({ password: input.current }))) throw new ApiError(422, "The current password is wrong.");
  const now = Date.now();
  const userId = who.user.id;
  const [, ...rest] = await db.batch([
    db
      .update(users)
      .set({ passwordHash: await hashPassword(password, pepper), updatedAt: now })
      .where(eq(users.id, userId)),
    ...signOutEverywhereStatements(db, userId, keepSessionHash, now),
  ]);
  const revoked = rest[rest.length - 1] as { id: string }[];
  for (const t of revoked) fx.add({ type: "disconnect_streams", accountId: who.accountId, tokenId: t.id });
}
