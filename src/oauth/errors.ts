// OAuth errors with Doorkeeper's codes and English descriptions, so clients that key off them (Elk re-registers on
// "Client authentication failed") behave as they do against Mastodon.
import { ApiError } from "../lib/http/errors";

export const OAUTH_DESCRIPTIONS = {
  invalid_request: "The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.",
  invalid_client: "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
  invalid_grant:
    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
  unauthorized_client: "The client is not authorized to perform this request using this method.",
  access_denied: "The resource owner or authorization server denied the request.",
  unsupported_response_type: "The authorization server does not support this response type.",
  unsupported_grant_type: "The authorization grant type is not supported by the authorization server.",
  invalid_scope: "The requested scope is invalid, unknown, or malformed.",
  invalid_redirect_uri: "The requested redirect uri is malformed or doesn't match client redirect URI.",
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_DESCRIPTIONS;

/** `{error, error_description}`; 401 for client authentication failures, 400 otherwise (RFC 6749 §5.2). */
export function oauthError(code: OAuthErrorCode, description?: string): ApiError {
  return new ApiError(code === "invalid_client" ? 401 : 400, code, { error_description: description ?? OAUTH_DESCRIPTIONS[code] });
}

export const missingParam = (name: string) => oauthError("invalid_request", `Missing required parameter: ${name}.`);
