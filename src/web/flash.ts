// The one flash message of the server-rendered pages (admin and settings), carried across a POST-redirect-GET in a
// short-lived HttpOnly cookie: the POST sets it, the next page shows it (Hono JSX escapes it) and clears it. One cookie,
// one format, so a message set by one part of the site reads the same wherever it is shown.
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Ctx } from "../context";

const FLASH = "tern_flash";
const MAX = 300;
const isHttps = (c: Ctx) => new URL(c.req.url).protocol === "https:";
const flashName = (c: Ctx) => (isHttps(c) ? `__Host-${FLASH}` : FLASH);

export function setFlash(c: Ctx, message: string): void {
  setCookie(c, flashName(c), encodeURIComponent(message.slice(0, MAX)), { path: "/", httpOnly: true, sameSite: "Lax", secure: isHttps(c), maxAge: 60 });
}

/** The flash set by the last action, removed as it is shown. */
export function takeFlash(c: Ctx): string | undefined {
  const v = getCookie(c, flashName(c));
  if (v === undefined) return undefined;
  deleteCookie(c, flashName(c), { path: "/", secure: isHttps(c) });
  try {
    return decodeURIComponent(v).slice(0, MAX) || undefined;
  } catch {
    return undefined;
  }
}
