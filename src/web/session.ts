// Cookies and CSRF for the HTML pages (B9). The session cookie is HttpOnly, SameSite=Lax, and on https Secure with
// the __Host- prefix. Forms posted with a session carry the session's CSRF token; forms posted before there is a
// session (sign-in, setup) use a double-submit cookie. Every form POST also needs an Origin, when the browser sends
// one, equal to our own.
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Ctx } from "../context";
import { randomToken, safeEqual } from "../lib/security/crypto";
import { SESSION_TTL_MS, loadWebSession, type WebSession } from "./session-store";

const isHttps = (c: Ctx) => new URL(c.req.url).protocol === "https:";
const cookieName = (c: Ctx, base: string) => (isHttps(c) ? `__Host-${base}` : base);
const SESSION = "tern_session";
const CSRF = "tern_csrf";

function cookieOpts(c: Ctx, maxAgeSeconds: number) {
  return { path: "/", httpOnly: true, sameSite: "Lax" as const, secure: isHttps(c), maxAge: maxAgeSeconds };
}

export async function currentSession(c: Ctx): Promise<WebSession | null> {
  return loadWebSession(c.get("db"), getCookie(c, cookieName(c, SESSION)));
}

export function setSessionCookie(c: Ctx, id: string): void {
  setCookie(c, cookieName(c, SESSION), id, cookieOpts(c, Math.floor(SESSION_TTL_MS / 1000)));
}

export function clearSessionCookie(c: Ctx): void {
  deleteCookie(c, cookieName(c, SESSION), { path: "/", secure: isHttps(c) });
}

/** The pre-session CSRF token: reuses the cookie's value or sets a new one. */
export function preSessionCsrf(c: Ctx): string {
  const existing = getCookie(c, cookieName(c, CSRF));
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken(32);
  setCookie(c, cookieName(c, CSRF), token, cookieOpts(c, 3600 * 12));
  return token;
}

/** A foreign Origin (or the opaque "null") is refused; browsers that omit Origin are covered by the token. */
export function originAllowed(c: Ctx): boolean {
  const origin = c.req.header("origin");
  if (origin === undefined) return true;
  return origin === new URL(c.req.url).origin || origin === c.get("config").origin;
}

export function preSessionCsrfValid(c: Ctx, field: unknown): boolean {
  const cookie = getCookie(c, cookieName(c, CSRF));
  return originAllowed(c) && typeof field === "string" && !!cookie && field.length > 0 && safeEqual(cookie, field);
}

export function sessionCsrfValid(c: Ctx, session: WebSession, field: unknown): boolean {
  return originAllowed(c) && typeof field === "string" && field.length > 0 && safeEqual(session.csrf, field);
}

/** Only same-origin relative paths: `/x?y`, never `//host`, `/\host` or an absolute URL. */
export function safeReturnTo(v: unknown): string {
  if (typeof v !== "string" || v.length > 4000) return "/";
  if (!v.startsWith("/") || v.startsWith("//") || v.startsWith("/\\") || /[\u0000-\u001f\u007f\\]/.test(v)) return "/";
  return v;
}
