// Mastodon-compatible rate limits (fixed windows) counted in the RateLimiter Durable Object, keyed by rule + key.
// Rules are applied by the handlers that own the action (sign-in, password grant, sign-up...), not by matching
// request paths, so path variants such as `/auth/sign_in.json` or `/API/v1/...` cannot land in another bucket (B13).
import type { Ctx } from "../context";
import { tooManyRequests } from "./errors";
import type { RateLimiter } from "./rate-limiter-do";

export interface RateRule {
  /** e.g. "login_ip", "login_email", "sign_up_ip", "media_upload" */
  name: string;
  key: string;
  limit: number;
  periodSeconds: number;
}

/** Counts one hit; throws 429 `Too many requests` with X-RateLimit-* headers when over the limit. */
export async function enforceRateLimit(c: Ctx, rule: RateRule): Promise<void> {
  const ns = c.env.RATE_LIMITER as unknown as DurableObjectNamespace<RateLimiter>;
  const stub = ns.get(ns.idFromName(`${rule.name}:${rule.key}`));
  const hit = await stub.hit(rule.limit, rule.periodSeconds);
  if (hit.allowed) return;
  const err = tooManyRequests();
  err.headers = {
    "X-RateLimit-Limit": String(rule.limit),
    "X-RateLimit-Remaining": "0",
    "X-RateLimit-Reset": new Date(hit.resetAt).toISOString(),
    "Retry-After": String(Math.max(1, Math.ceil((hit.resetAt - Date.now()) / 1000))),
  };
  throw err;
}

/** Sign-in attempts per client IP, form and password grant together (B11). */
export const LOGIN_IP_LIMIT = { limit: 25, periodSeconds: 5 * 60 } as const;
/** Failed sign-ins per e-mail address, whatever the IP (B11). */
export const LOGIN_EMAIL_FAILURE_LIMIT = { limit: 25, periodSeconds: 3600 } as const;

/**
 * Every sign-in attempt, from the form or the password grant, counts against its IP before the password is checked:
 * the 26th in 5 minutes is 429 whatever it carries (the IP is the caller's own budget).
 */
export async function throttleLogin(c: Ctx): Promise<void> {
  await enforceRateLimit(c, { name: "login_ip", key: clientIp(c), ...LOGIN_IP_LIMIT });
}

/**
 * A failed sign-in (wrong e-mail or password) counts against the e-mail it named; past 25 failures in an hour it is
 * answered 429 instead of "invalid". Only failures count and the counter is consulted only after a failure, so
 * strangers guessing from rotating addresses cannot lock the owner out: the right password always signs in (it is
 * still refused by the owner's own per-IP budget, never by this one).
 */
export async function countLoginFailure(c: Ctx, email: unknown): Promise<void> {
  if (typeof email !== "string" || !email.trim()) return;
  await enforceRateLimit(c, { name: "login_email_failures", key: email.trim().toLowerCase().slice(0, 320), ...LOGIN_EMAIL_FAILURE_LIMIT });
}

/** The client IP: CF-Connecting-IP only (X-Forwarded-For is never trusted); IPv6 grouped by /64. */
export function clientIp(c: Ctx): string {
  const ip = (c.req.header("cf-connecting-ip") ?? "").trim() || "unknown";
  if (ip.includes(":")) return ipv6Prefix64(ip);
  return ip;
}

/** First four groups of an IPv6 address, with `::` expanded, so every spelling of one /64 is one key. */
function ipv6Prefix64(ip: string): string {
  const addr = ip
    .replace(/^\[|\]$/g, "")
    .split("%")[0]
    .toLowerCase();
  const [head, tail] = addr.includes("::") ? addr.split("::", 2) : [addr, null];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === null ? h : [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+/, "") || "0")
    .join(":")}::/64`;
}
