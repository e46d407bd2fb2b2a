// Access tokens. Stored as SHA-256 for lookup; an AES-GCM copy under SECRET_KEY_BASE lets Tern hand an app its
// existing token again (Mastodon's reuse_access_token, spec Authentication 4) without keeping tokens in clear:
// a D1 dump or Time Travel copy alone holds no usable bearer token.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { oauthAccessTokens } from "../../db/schema/index";
import { base64url, fromBase64, randomToken, sha256Hex } from "../../lib/security/crypto";
import { snowflake } from "../../lib/text/ids";

const enc = new TextEncoder();

async function aesKey(secret: string): Promise<CryptoKey> {
  const raw = await crypto.subtle.digest("SHA-256", enc.encode(`tern-token-encryption:${secret}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function seal(secret: string, token: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await aesKey(secret), enc.encode(token));
  return `${base64url(iv)}.${base64url(new Uint8Array(ct))}`;
}

export async function unseal(secret: string, sealed: string): Promise<string | null> {
  const [iv, ct] = sealed.split(".");
  if (!iv || !ct) return null;
  try {
    const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(iv) }, await aesKey(secret), fromBase64(ct));
    return new TextDecoder().decode(pt);
  } catch {
    return null;
  }
}

export interface IssuedToken {
  accessToken: string;
  scopes: string;
  createdAt: number;
}

export async function issueToken(
  db: DB,
  secret: string,
  opts: { applicationId: string | null; userId: string | null; scopes: string[]; grantId?: string | null; reuse?: boolean },
): Promise<IssuedToken> {
  const scopes = opts.scopes.join(" ");
  if (opts.reuse !== false && opts.applicationId) {
    const existing = await db
      .select({ sealed: oauthAccessTokens.sealed, createdAt: oauthAccessTokens.createdAt })
      .from(oauthAccessTokens)
      .where(
        and(
          eq(oauthAccessTokens.applicationId, opts.applicationId),
          opts.userId ? eq(oauthAccessTokens.userId, opts.userId) : isNull(oauthAccessTokens.userId),
          eq(oauthAccessTokens.scopes, scopes),
          isNull(oauthAccessTokens.revokedAt),
        ),
      )
      .orderBy(sql`${oauthAccessTokens.id} DESC`)
      .limit(1);
    if (existing[0]?.sealed) {
      const t = await unseal(secret, existing[0].sealed);
      if (t) return { accessToken: t, scopes, createdAt: existing[0].createdAt };
    }
  }
  const token = randomToken(32);
  const now = Date.now();
  await db.insert(oauthAccessTokens).values({
    id: snowflake(now),
    tokenHash: await sha256Hex(token),
    sealed: await seal(secret, token),
    applicationId: opts.applicationId,
    userId: opts.userId,
    scopes,
    grantId: opts.grantId ?? null,
    createdAt: now,
  });
  return { accessToken: token, scopes, createdAt: now };
}
