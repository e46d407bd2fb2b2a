// Token entity (docs.joinmastodon.org/entities/Token): the answer of POST /oauth/token and of a sign-up through
// POST /api/v1/accounts. `created_at` is in seconds, as Doorkeeper renders it.
export interface MastodonToken {
  access_token: string;
  token_type: "Bearer";
  scope: string;
  created_at: number;
}

/** An issued token (src/services/auth/tokens.ts IssuedToken): the token in clear, its scopes space-separated, ms of issue. */
export interface TokenGrant {
  accessToken: string;
  scopes: string;
  createdAt: number;
}

export function renderToken(t: TokenGrant): MastodonToken {
  return { access_token: t.accessToken, token_type: "Bearer", scope: t.scopes, created_at: Math.floor(t.createdAt / 1000) };
}
