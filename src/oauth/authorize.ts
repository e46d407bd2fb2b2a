// Validation of an authorization request (GET shows it, POST re-checks the same fields from the form): client,
// exact redirect URI (B5), response type, scopes within the app's (B10), PKCE S256 only (B8). Errors before the
// redirect URI is trusted are shown on our own page; later errors go back to the client (RFC 6749 §4.1.2.1).
import type { DB } from "../db/client";
import { parseScopes, scopesWithin } from "./scopes";
import { appRedirectUris } from "../entities/settings/application";
import { findAppByClientId, OOB_URI, type AppRow } from "./apps";
import { OAUTH_DESCRIPTIONS, type OAuthErrorCode } from "./errors";

export type ResponseMode = "query" | "fragment" | "form_post";

export interface AuthorizeRequest {
  app: AppRow;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  responseMode: ResponseMode;
}

export type AuthorizeCheck =
  | { kind: "ok"; req: AuthorizeRequest }
  /** Shown on our page; never redirected (the client or redirect URI is not trusted). */
  | { kind: "page"; error: OAuthErrorCode; description: string }
  /** Sent back to the (verified) redirect URI. */
  | { kind: "redirect"; redirectUri: string; responseMode: ResponseMode; state: string | null; error: OAuthErrorCode; description: string };

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export async function checkAuthorizeRequest(db: DB, p: Record<string, unknown>): Promise<AuthorizeCheck> {
  const page = (error: OAuthErrorCode, description: string = OAUTH_DESCRIPTIONS[error]): AuthorizeCheck => ({ kind: "page", error, description });
  const clientId = str(p.client_id);
  if (!clientId) return page("invalid_request", "Missing required parameter: client_id.");
  const app = await findAppByClientId(db, clientId);
  if (!app) return page("invalid_client");

  const redirectUri = str(p.redirect_uri);
  if (!redirectUri) return page("invalid_request", "Missing required parameter: redirect_uri.");
  // Exact string match only: no normalisation, prefix, case folding or query merging (B5).
  if (!appRedirectUris(app).includes(redirectUri)) return page("invalid_redirect_uri");

  const rm = str(p.response_mode);
  const responseMode: ResponseMode = rm === "fragment" || rm === "form_post" ? rm : "query";
  const state = str(p.state);
  if (state !== null && state.length > 2000) return page("invalid_request", "The state parameter is too long.");
  const back = (error: OAuthErrorCode, description: string = OAUTH_DESCRIPTIONS[error]): AuthorizeCheck => ({
    kind: "redirect",
    redirectUri,
    responseMode,
    state,
    error,
    description,
  });

  const responseType = str(p.response_type);
  if (!responseType) return back("invalid_request", "Missing required parameter: response_type.");
  if (responseType !== "code") return back("unsupported_response_type");

  const scopeRaw = p.scope ?? p.scopes;
  if (scopeRaw !== undefined && typeof scopeRaw !== "string") return back("invalid_scope");
  const scopes = parseScopes(scopeRaw as string | undefined);
  if (!scopes || !scopesWithin(scopes, new Set(app.scopes.split(" ").filter(Boolean)))) return back("invalid_scope");

  let codeChallenge = str(p.code_challenge) || null;
  let codeChallengeMethod = str(p.code_challenge_method) || null;
  if (codeChallenge) {
    // RFC 7636 defaults a missing method to "plain", which Mastodon refuses since 4.3 (B8).
    if (codeChallengeMethod !== "S256") return back("invalid_request", "Invalid code_challenge_method. Only S256 is supported.");
    if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) return back("invalid_request", "The code_challenge is malformed.");
  } else {
    if (codeChallengeMethod && codeChallengeMethod !== "S256") return back("invalid_request", "Invalid code_challenge_method. Only S256 is supported.");
    codeChallenge = null;
    codeChallengeMethod = null;
  }
  return { kind: "ok", req: { app, redirectUri, scopes, state, codeChallenge, codeChallengeMethod, responseMode } };
}

export const isOob = (uri: string) => uri === OOB_URI;

/**
 * The client's redirect URI with the response parameters added (query or fragment). Built on the registered string
 * rather than through URL, which would lower-case custom schemes such as `com.tapbots.Ivory.1:`.
 */
export function redirectWith(redirectUri: string, mode: ResponseMode, params: Record<string, string | null>): string {
  const qs = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== null)).toString();
  if (mode === "fragment") return `${redirectUri}#${qs}`;
  return `${redirectUri}${redirectUri.includes("?") ? "&" : "?"}${qs}`;
}
