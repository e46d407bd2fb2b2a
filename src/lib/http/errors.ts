// Mastodon error bodies: {"error": "..."} (+ error_description for OAuth), always JSON.
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export class ApiError extends Error {
  /** Extra response headers (e.g. X-RateLimit-* on 429); set by whoever throws. */
  headers?: Record<string, string>;
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
  body(): Record<string, unknown> {
    return { error: this.message, ...this.extra };
  }
}

export const notFound = () => new ApiError(404, "Record not found");
export const gone = () => new ApiError(410, "Gone");
export const forbidden = (msg = "This action is not allowed") => new ApiError(403, msg);
export const unprocessable = (msg: string, extra: Record<string, unknown> = {}) => new ApiError(422, msg, extra);
export const badRequest = (msg: string) => new ApiError(400, msg);
export const unauthorized = (msg = "The access token is invalid") => new ApiError(401, msg);
export const validationFailed = (msg: string) => new ApiError(422, `Validation failed: ${msg}`);
export const wrongScope = () => new ApiError(403, "This action is outside the authorized scopes");
export const tooManyRequests = () => new ApiError(429, "Too many requests");

export function errorResponse(err: unknown): Response {
  if (err instanceof ApiError) {
    return new Response(JSON.stringify(err.body()), {
      status: err.status,
      headers: { ...err.headers, "content-type": "application/json; charset=utf-8" },
    });
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const msg = err.message || (status === 413 ? "Payload too large" : "Bad request");
    return new Response(JSON.stringify({ error: msg }), {
      status,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  }
  console.error("unhandled error", err instanceof Error ? err.stack : err);
  return new Response(JSON.stringify({ error: "Internal server error" }), {
    status: 500,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}
