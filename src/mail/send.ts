// The one call to Cloudflare Email Service (the `send_email` binding, `env.EMAIL.send()`). The binding takes a plain
// message object ({from, to, subject, text, html}: workers-types' EmailMessageBuilder), which this workerd and
// miniflare both accept, so Tern builds no raw MIME and needs no MIME library: the service writes the multipart message
// (a text part always, an HTML part when given). Locally, miniflare keeps what it was given (wrangler dev lists it in its
// local explorer; README "E-mail").
import type { Env } from "../env";

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Whether this deployment can send mail: the EMAIL binding is configured. */
export const mailConfigured = (env: Pick<Env, "EMAIL">): boolean => !!env.EMAIL;

/** The sender: MAIL_FROM, else notifications@ the instance's domain (without a port). */
export function mailFrom(env: Pick<Env, "MAIL_FROM">, domain: string): string {
  return env.MAIL_FROM?.trim() || `notifications@${domain.replace(/:\d+$/, "")}`;
}

export class MailTimeout extends Error {
  constructor(ms: number) {
    super(`mail: send() did not answer within ${ms} ms`);
  }
}

/**
 * Sends one mail. Throws when the binding is missing, refuses, throws or does not answer within MAIL_TIMEOUT_MS (the
 * runner then retries the `mail` effect, a bounded number of times: src/effects/retry.ts).
 */
export async function sendMail(env: Pick<Env, "EMAIL" | "MAIL_FROM" | "MAIL_TIMEOUT_MS">, fromName: string, domain: string, mail: OutgoingMail): Promise<void> {
  const binding = env.EMAIL;
  if (!binding) throw new Error("mail: no EMAIL binding");
  const ms = Number(env.MAIL_TIMEOUT_MS) > 0 ? Number(env.MAIL_TIMEOUT_MS) : 15_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MailTimeout(ms)), ms);
  });
  try {
    await Promise.race([
      binding.send({
        from: { name: fromName.slice(0, 100), email: mailFrom(env, domain) },
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      }),
      timeout,
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
