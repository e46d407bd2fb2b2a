// Mastodon-compatible rate limits (fixed windows) counted in the RateLimiter Durable Object, keyed by rule + key.
// Implemented by the OAuth/web work; this signature is the contract other modules call.
import type { Ctx } from "../context";

export interface RateRule {
  /** e.g. "login_ip", "login_email", "sign_up_ip", "media_upload" */
  name: string;
  key: string;
  limit: number;
  periodSeconds: number;
}

/** Counts one hit; throws 429 `Too many requests` with X-RateLimit-* headers when over the limit. */
export async function enforceRateLimit(c: Ctx, rule: RateRule): Promise<void> {
  void c;
  void rule;
}

/** The client IP: CF-Connecting-IP only (X-Forwarded-For is never trusted); IPv6 grouped by /64. */
export function clientIp(c: Ctx): string {
  const ip = c.req.header("cf-connecting-ip") ?? "unknown";
  if (ip.includes(":")) return ip.split(":").slice(0, 4).join(":") + "::/64";
  return ip;
}
