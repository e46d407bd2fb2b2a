// Helpers for the account settings page tests: a signed-in jar, form posts carrying the page's CSRF token, and
// two-factor set-up with codes computed by the test (src/lib/security/totp.ts).
import { env } from "cloudflare:test";
import { base32Decode, totp } from "../../src/lib/security/totp";
import { ORIGIN } from "./helpers";
import { decodeEntities, hidden, type Jar, signIn, web } from "./oauth-helpers";

export const emailOf = (username: string) => `${username}@example.com`;

export async function signedIn(username: string, password?: string, ip?: string): Promise<Jar> {
  return signIn(emailOf(username), password, ip);
}

/** The CSRF token of the page at `path` (GET with the jar). */
export async function csrfOf(jar: Jar, path = "/settings/profile"): Promise<string> {
  const res = await web(path, { jar });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  return hidden(res.text_, "csrf")!;
}

/** POSTs a form with the session's CSRF token and our Origin. */
export async function postForm(jar: Jar, path: string, form: Record<string, string>, csrf?: string) {
  return web(path, { jar, form: { csrf: csrf ?? (await csrfOf(jar)), ...form }, headers: { origin: ORIGIN } });
}

/** The text of an element by id (first match), entities decoded. */
export function textOf(html: string, id: string): string | null {
  const m = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return m ? decodeEntities(m[1]!.trim()) : null;
}

/** The code for now plus `steps` time steps. */
export async function codeFor(secret: string, steps = 0): Promise<string> {
  return totp(base32Decode(secret)!, Date.now() + steps * 30_000);
}

/** Lets the next code of the current step pass again (the replay guard remembers the last step used). */
export async function forgetUsedStep(userId: string): Promise<void> {
  await env.DB.prepare("UPDATE user_two_factor SET consumed_timestep = NULL WHERE user_id = ?").bind(userId.padStart(20, "0")).run();
}

/** Turns two-factor sign-in on through the pages; returns the secret and the recovery codes shown. */
export async function enableTwoFactor(jar: Jar, userId: string): Promise<{ secret: string; codes: string[] }> {
  const begin = await postForm(jar, "/settings/otp_authentication", {});
  if (begin.status !== 303) throw new Error(`begin: ${begin.status}`);
  const pageRes = await web("/settings/otp_authentication", { jar });
  const secret = textOf(pageRes.text_, "otp-secret");
  if (!secret) throw new Error("no secret on the page");
  const confirm = await postForm(
    jar,
    "/settings/two_factor_authentication/confirmation",
    { otp_attempt: await codeFor(secret) },
    hidden(pageRes.text_, "csrf")!,
  );
  if (confirm.status !== 200) throw new Error(`confirm: ${confirm.status} ${confirm.text_.slice(0, 300)}`);
  const list = /<ol class="codes" id="recovery-codes">([\s\S]*?)<\/ol>/.exec(confirm.text_)?.[1] ?? "";
  const codes = [...list.matchAll(/<li>([0-9a-f]+)<\/li>/g)].map((m) => m[1]!);
  await forgetUsedStep(userId);
  return { secret, codes };
}
