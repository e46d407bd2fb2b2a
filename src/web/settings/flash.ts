// The settings pages' flash messages: a fixed table, set and shown through the site's one flash (../flash.ts).
import type { Ctx } from "../../context";
import { setFlash } from "../flash";

export { takeFlash } from "../flash";

export const FLASH = {
  profile_saved: "Your profile was saved.",
  preferences_saved: "Your preferences were saved.",
  email_changed:
    "Your e-mail address was changed. This server is not set up to send e-mail, so no confirmation message went to the new address: it is used for signing in from now on.",
  email_pending: "A confirmation link was sent to the new address. Your current address stays in use until you follow that link.",
  password_changed: "Your password was changed. Your other sessions and every application were signed out.",
  otp_disabled: "Two-factor authentication is off.",
  app_revoked: "The application's access was revoked.",
  session_revoked: "That session was signed out.",
} as const;
export type FlashKey = keyof typeof FLASH;

/** Sets the flash and answers with a 303 to `path`. */
export function redirectWithFlash(c: Ctx, path: string, key: FlashKey): Response {
  setFlash(c, FLASH[key]);
  return c.redirect(path, 303);
}
