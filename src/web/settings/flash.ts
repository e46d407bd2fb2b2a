// Flash messages for the settings pages (POST-redirect-GET): the POST sets a short-lived cookie naming one message of
// a fixed table, the next GET shows it and clears the cookie. Only the key travels, so no text from a request can come
// back in a page through it.
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Ctx } from "../../context";

export const FLASH = {
  profile_saved: "Your profile was saved.",
  preferences_saved: "Your preferences were saved.",
  email_changed:
    "Your e-mail address was changed. Tern sends no e-mail, so no confirmation message went to the new address: it is used for signing in from now on.",
  password_changed: "Your password was changed. Your other sessions and every application were signed out.",
  otp_disabled: "Two-factor authentication is off.",
  app_revoked: "The application's access was revoked.",
  session_revoked: "That session was signed out.",
} as const;
export type FlashKey = keyof typeof FLASH;

const isHttps = (c: Ctx) => new URL(c.req.url).protocol === "https:";
const name = (c: Ctx) => (isHttps(c) ? "__Host-tern_flash" : "tern_flash");

/** Sets the flash and answers with a 303 to `path`. */
export function redirectWithFlash(c: Ctx, path: string, key: FlashKey): Response {
  setCookie(c, name(c), key, { path: "/", httpOnly: true, sameSite: "Lax", secure: isHttps(c), maxAge: 60 });
  return c.redirect(path, 303);
}

/** The pending flash message, if any (cleared). */
export function takeFlash(c: Ctx): string | undefined {
  const key = getCookie(c, name(c));
  if (!key) return undefined;
  deleteCookie(c, name(c), { path: "/", secure: isHttps(c) });
  return Object.hasOwn(FLASH, key) ? FLASH[key as FlashKey] : undefined;
}
