// The token endpoint's grants other than authorization_code, and revocation. Scopes are enforced against the
// application's registered scopes (Doorkeeper enforce_configured_scopes, B10); tokens are reused when the app already
// holds one for the same user and scopes (reuse_access_token).
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, oauthAccessTokens, users, userTwoFactor } from "../db/schema/index";
import type { Effects } from "../effects/collector";
import type { Config } from "../env";
import { unpadId } from "../lib/text/ids";
import { sha256Hex, verifyPassword } from "../lib/security/crypto";
import { parseScopes, scopesWithin } from "./scopes";
import type { AppRow } from "./apps";
import { missingParam, oauthError } from "./errors";
import { issueToken, type IssuedToken } from "../services/auth/tokens";

/** Requested scopes (default `read`), each within the app's registered scopes, or `invalid_scope`. */
export function resolveScopes(raw: unknown, app: AppRow): string[] {
  if (raw !== undefined && raw !== null && typeof raw !== "string") throw oauthError("invalid_scope");
  const list = parseScopes(raw as string | undefined);
  if (!list || !scopesWithin(list, new Set(app.scopes.split(" ").filter(Boolean)))) throw oauthError("invalid_scope");
  return list;
}

export async function clientCredentialsGrant(db: DB, secret: string, app: AppRow, scope: unknown): Promise<IssuedToken> {
  const scopes = resolveScopes(scope, app);
  return issueToken(db, secret, { applicationId: app.id, userId: null, scopes });
}

// Verifying against a fixed hash when the e-mail is unknown keeps response time from telling which e-mails exist.
const DUMMY_HASH = "pbkdf2-sha256$100000$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

export type LoginRefusal = "invalid" | "disabled" | "pending" | "unconfirmed";

export interface LoginUser {
  userId: string;
  accountId: string;
  email: string;
  /** Two-factor sign-in is on: a code must follow (src/services/auth/two-factor.ts). */
  otpRequired: boolean;
}

/** Checks e-mail and password and whether the user may sign in at all. */
export async function checkLogin(
  db: DB,
  cfg: Config,
  pepper: string,
  email: string,
  password: string,
): Promise<{ ok: true; user: LoginUser } | { ok: false; reason: LoginRefusal }> {
  const rows =
    email && email.length <= 254
      ? await db
          .select({ user: users, suspendedAt: accounts.suspendedAt, otpEnabledAt: userTwoFactor.enabledAt })
          .from(users)
          .innerJoin(accounts, eq(accounts.id, users.accountId))
          .leftJoin(userTwoFactor, eq(userTwoFactor.userId, users.id))
          .where(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`)
          .limit(1)
      : [];
  const row = rows[0];
  const valid = await verifyPassword(password, row?.user.passwordHash ?? DUMMY_HASH, pepper);
  if (!row || !valid || !password) return { ok: false, reason: "invalid" };
  if (row.user.disabled || row.suspendedAt) return { ok: false, reason: "disabled" };
  if (!row.user.approved) return { ok: false, reason: "pending" };
  if (cfg.requireEmailConfirmation && !row.user.confirmedAt) return { ok: false, reason: "unconfirmed" };
  return { ok: true, user: { userId: row.user.id, accountId: row.user.accountId, email: row.user.email, otpRequired: !!row.otpEnabledAt } };
}

export async function passwordGrant(
  db: DB,
  cfg: Config,
  secret: string,
  app: AppRow,
  p: { username?: unknown; password?: unknown; scope?: unknown; otp_attempt?: unknown },
  hooks: {
    /** Called when the e-mail or password is wrong (not for a refused account), before `invalid_grant`; may throw 429. */
    invalidPassword?: () => Promise<void>;
    /**
     * Checks `otp_attempt` for a user with two-factor sign-in against the account's budgets (src/oauth/credentials.ts):
     * true when right; throws 429 once the account's code budget is spent, even for the right code.
     */
    secondFactor: (user: LoginUser, code: unknown) => Promise<boolean>;
  },
): Promise<IssuedToken> {
  if (typeof p.username !== "string" || !p.username) throw missingParam("username");
  if (typeof p.password !== "string" || !p.password) throw missingParam("password");
  const scopes = resolveScopes(p.scope, app);
  const r = await checkLogin(db, cfg, secret, p.username, p.password);
  if (!r.ok) {
    if (r.reason === "invalid") await hooks.invalidPassword?.();
    throw oauthError("invalid_grant");
  }
  // Mastodon refuses the password grant outright to a user with two-factor sign-in (doorkeeper.rb:
  // `user unless user&.otp_required_for_login?`). Tern refuses it the same way unless `otp_attempt` carries a current
  // code or an unused recovery code; a wrong one counts as a failed sign-in and against the account's code budget.
  // Without `otp_attempt` nothing was tried, and nothing counts.
  if (r.user.otpRequired && (p.otp_attempt === undefined || !(await hooks.secondFactor(r.user, p.otp_attempt)))) {
    throw oauthError("invalid_grant");
  }
  return issueToken(db, secret, { applicationId: app.id, userId: r.user.userId, scopes });
}

/**
 * RFC 7009: revoking an unknown token, or another app's, is not an error (and does nothing). A revoked user token's
 * open streaming connections are closed at once (an effect), not at the hub's next token check.
 */
export async function revokeToken(db: DB, fx: Effects, app: AppRow, token: string): Promise<void> {
  if (!token || token.length > 200) return;
  const revoked = await db
    .update(oauthAccessTokens)
    .set({ revokedAt: Date.now() })
    .where(and(eq(oauthAccessTokens.tokenHash, await sha256Hex(token)), eq(oauthAccessTokens.applicationId, app.id), isNull(oauthAccessTokens.revokedAt)))
    .returning({
      id: oauthAccessTokens.id,
      accountId: sql<string | null>`(SELECT ${users.accountId} FROM ${users} WHERE ${users.id} = ${oauthAccessTokens.userId})`,
    });
  for (const t of revoked) if (t.accountId) fx.add({ type: "disconnect_streams", accountId: unpadId(String(t.accountId)), tokenId: t.id });
}
