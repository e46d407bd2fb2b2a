// Helpers for the mail tests: the mail miniflare captured for an address (through CAPTURED_MAIL, which reads what the
// EMAIL binding stored: test/support/captured-mail.ts), the links in it, and the forms of the mailed-link pages.
import { env } from "cloudflare:test";
import { ORIGIN } from "./helpers";
import { hidden, type Jar, web } from "./oauth-helpers";

export interface CapturedMail {
  text: string;
  html: string | null;
  at: number;
}

/** Every mail captured for `to` since `since` (ms), oldest first. */
export async function mailTo(to: string, since = 0): Promise<CapturedMail[]> {
  const res = await env.CAPTURED_MAIL.fetch(`http://mail/?to=${encodeURIComponent(to)}&since=${since}`);
  if (!res.ok) throw new Error(`CAPTURED_MAIL: ${res.status}`);
  return (await res.json()) as CapturedMail[];
}

/** The one link in a mail's text that starts with `path` on the test origin. */
export function linkIn(text: string, path: string): string {
  const m = new RegExp(`${ORIGIN.replace(/\./g, "\\.")}${path.replace(/\?/g, "\\?")}[^\\s]+`).exec(text);
  if (!m) throw new Error(`no ${path} link in:\n${text}`);
  return m[0];
}

/** A page's pre-session form token (the sign-in pages' CSRF cookie goes into `jar`). */
export async function formCsrf(jar: Jar, path: string, ip?: string): Promise<string> {
  const res = await web(path, { jar, ip });
  const csrf = hidden(res.text_, "csrf");
  if (!csrf) throw new Error(`no csrf on ${path}: ${res.status}`);
  return csrf;
}

/** POSTs "Forgot your password?" for `email` from `ip`, as the page does. */
export async function askReset(jar: Jar, email: string, ip = "203.0.113.7") {
  const csrf = await formCsrf(jar, "/auth/password/new", ip);
  return web("/auth/password", { jar, ip, form: { csrf, email }, headers: { origin: ORIGIN } });
}

/** The real binding behind a fault: the first `failures` calls fail as `how`, later ones go through. */
export function failingBinding(how: "throw" | "reject" | "hang", failures = Number.POSITIVE_INFINITY) {
  const calls = { n: 0 };
  const real = env.EMAIL!;
  const binding = {
    send(message: EmailMessageBuilder) {
      calls.n++;
      if (calls.n > failures) return real.send(message);
      if (how === "throw") throw new Error("Email Service: internal error");
      if (how === "reject") return Promise.reject(new Error("destination address not verified"));
      return new Promise<EmailSendResult>(() => {});
    },
  } as unknown as SendEmail;
  return { binding, calls };
}
