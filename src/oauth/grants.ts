// Authorization codes: random, stored as SHA-256, 10 minutes, single use (Doorkeeper defaults). Redeeming a code
// twice revokes every token issued from it (RFC 6749 §4.1.2, security B7).
import { and, eq, isNull } from "drizzle-orm";
import type { DB } from "../db/client";
import { oauthAccessGrants, oauthAccessTokens } from "../db/schema/index";
import { randomToken, safeEqual, sha256Base64url, sha256Hex } from "../lib/security/crypto";
import { snowflake } from "../lib/text/ids";
import type { AppRow } from "./apps";
import { missingParam, oauthError } from "./errors";
import { issueToken, type IssuedToken } from "../services/auth/tokens";

export const CODE_TTL_MS = 10 * 60 * 1000;

export interface NewGrant {
  app: AppRow;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
}

export async function createGrant(db: DB, g: NewGrant): Promise<string> {
  const code = randomToken(32);
  const now = Date.now();
  await db.insert(oauthAccessGrants).values({
    id: snowflake(now),
    codeHash: await sha256Hex(code),
    applicationId: g.app.id,
    userId: g.userId,
    redirectUri: g.redirectUri,
    scopes: g.scopes.join(" "),
    codeChallenge: g.codeChallenge,
    codeChallengeMethod: g.codeChallenge ? g.codeChallengeMethod : null,
    expiresAt: now + CODE_TTL_MS,
    createdAt: now,
  });
  return code;
}

export interface CodeExchange {
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
}

/** grant_type=authorization_code for an authenticated client. */
export async function exchangeCode(db: DB, secret: string, app: AppRow, p: CodeExchange): Promise<IssuedToken> {
  if (!p.code) throw missingParam("code");
  if (!p.redirectUri) throw missingParam("redirect_uri");
  if (p.code.length > 200) throw oauthError("invalid_grant");
  const rows = await db
    .select()
    .from(oauthAccessGrants)
    .where(eq(oauthAccessGrants.codeHash, await sha256Hex(p.code)))
    .limit(1);
  const grant = rows[0];
  if (!grant) throw oauthError("invalid_grant");
  const now = Date.now();
  if (grant.usedAt) {
    await revokeGrantTokens(db, grant.id, now);
    throw oauthError("invalid_grant");
  }
  if (grant.applicationId !== app.id || grant.expiresAt <= now || grant.redirectUri !== p.redirectUri) throw oauthError("invalid_grant");
  if (!(await verifierMatches(grant.codeChallenge, grant.codeChallengeMethod, p.codeVerifier))) throw oauthError("invalid_grant");

  // Claim the code atomically: of two concurrent exchanges only one sees used_at still NULL.
  const claimed = await db
    .update(oauthAccessGrants)
    .set({ usedAt: now })
    .where(and(eq(oauthAccessGrants.id, grant.id), isNull(oauthAccessGrants.usedAt)))
    .returning({ id: oauthAccessGrants.id });
  if (!claimed.length) {
    await revokeGrantTokens(db, grant.id, now);
    throw oauthError("invalid_grant");
  }
  // A fresh token bound to this grant (no reuse), so a replayed code revokes exactly what it produced.
  return issueToken(db, secret, {
    applicationId: app.id,
    userId: grant.userId,
    scopes: grant.scopes.split(" ").filter(Boolean),
    grantId: grant.id,
    reuse: false,
  });
}

/** PKCE (RFC 7636), S256 only. A verifier without a challenge fails, as in Doorkeeper. */
async function verifierMatches(challenge: string | null, method: string | null, verifier: string | undefined): Promise<boolean> {
  if (!challenge) return !verifier;
  if (!verifier || method !== "S256") return false;
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return safeEqual(await sha256Base64url(verifier), challenge);
}

async function revokeGrantTokens(db: DB, grantId: string, now: number): Promise<void> {
  await db
    .update(oauthAccessTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthAccessTokens.grantId, grantId), isNull(oauthAccessTokens.revokedAt)));
}

/** Expired codes are useless; the scheduled job may call this to keep the table small. */
