// Runs one `mail` effect (src/effects/types.ts): reads what the mail says, then sends it (./send.ts). A failure throws,
// and the effects runner, the one retry owner of effects, runs it again with a backoff, MAX_EFFECT_ATTEMPTS runs at most,
// then keeps it in dead_letters (src/effects/retry.ts). A mail whose reason is gone (a link used or replaced, a report
// resolved, an account already reviewed, a recipient disabled) is not sent; without an EMAIL binding nothing is sent.
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import type { Config, Env } from "../env";
import type { MailJob } from "../effects/types";
import { unsealText } from "../lib/security/seal";
import { padId } from "../lib/text/ids";
import { LINK_SEAL_LABEL } from "../services/auth/email-links";
import { issuePasswordResetLink } from "../services/auth/password-reset";
import { issueConfirmationResendLink } from "../services/auth/email-confirmation";
import { SETTING } from "../services/instance/instance";
import { confirmationMail, newReportMail, pendingAccountMail, reconfirmationMail, resetPasswordMail, type Site, trendsMail } from "./compose";
import { type OutgoingMail, sendMail } from "./send";

type MailEnv = Pick<Env, "EMAIL" | "MAIL_FROM" | "MAIL_TIMEOUT_MS" | "SECRET_KEY_BASE">;

interface Recipient {
  email: string;
  username: string;
  disabled: number;
  title: string | null;
}

/** The recipient user's address, handle and state, with the instance's name as the admin settings set it. */
async function recipient(db: DB, userId: string): Promise<Recipient | undefined> {
  const rows = await db.all<Recipient>(sql`SELECT u.email AS email, a.username AS username, u.disabled AS disabled,
      (SELECT value FROM instance_settings WHERE key = ${SETTING.title}) AS title
    FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.id = ${padId(userId)}`);
  return rows[0];
}

/**
 * A `password_reset` effect: if `email` is an account's, a new reset link is written (replacing the older) and mailed
 * at once, the token never leaving this invocation. A failed send throws, and the runner's retry writes a newer link.
 */
export const runPasswordReset = (db: DB, env: MailEnv, cfg: Config, email: string): Promise<boolean> =>
  mailNewLink(db, env, cfg, email, issuePasswordResetLink, resetPasswordMail);

/** A `confirmation_resend` effect: a new sign-up link for an account awaiting confirmation, mailed at once. */
export const runConfirmationResend = (db: DB, env: MailEnv, cfg: Config, email: string): Promise<boolean> =>
  mailNewLink(db, env, cfg, email, issueConfirmationResendLink, confirmationMail);

/** Issues a link for `email` (nothing when it is no account's, or none is due) and mails it at once. */
async function mailNewLink(
  db: DB,
  env: MailEnv,
  cfg: Config,
  email: string,
  issue: (db: DB, secret: string, email: string) => Promise<{ userId: string; email: string; token: string } | null>,
  build: (site: Site, to: string, username: string, token: string) => Parameters<typeof sendMail>[3],
): Promise<boolean> {
  if (!env.EMAIL) return false;
  const link = await issue(db, env.SECRET_KEY_BASE ?? "", email);
  if (!link) return false;
  const who = await recipient(db, link.userId);
  if (!who) return false;
  const site: Site = { title: who.title || cfg.title, origin: cfg.origin };
  await sendMail(env, site.title, cfg.domain, build(site, link.email, who.username, link.token));
  return true;
}

/** Sends the mail `job` describes; returns false when there was nothing to send. */
export async function runMail(db: DB, env: MailEnv, cfg: Config, job: MailJob): Promise<boolean> {
  if (!env.EMAIL) {
    console.warn("mail: no EMAIL binding, not sent:", job.kind);
    return false;
  }
  const who = await recipient(db, job.userId);
  if (!who) return false;
  const site: Site = { title: who.title || cfg.title, origin: cfg.origin };
  const mail = await compose(db, env, site, who, job);
  if (!mail) return false;
  await sendMail(env, site.title, cfg.domain, mail);
  return true;
}

async function compose(db: DB, env: MailEnv, site: Site, who: Recipient, job: MailJob): Promise<OutgoingMail | null> {
  switch (job.kind) {
    case "confirm":
    case "reconfirm":
    case "reset_password": {
      // The link must still be the user's live one: used, replaced or expired links are not mailed.
      const link = await db.all<{ email: string }>(sql`SELECT email FROM email_links WHERE id = ${padId(job.linkId)} AND expires_at > ${Date.now()}`);
      if (!link[0]) return null;
      const token = await unsealText(env.SECRET_KEY_BASE ?? "", LINK_SEAL_LABEL, job.sealed);
      if (!token) {
        console.error("mail: a link's token does not open under SECRET_KEY_BASE (was it changed?); not sent");
        return null;
      }
      const to = link[0].email;
      if (job.kind === "confirm") return confirmationMail(site, to, who.username, token);
      if (job.kind === "reconfirm") return reconfirmationMail(site, to, who.username, token);
      // A reset goes to a disabled account too (Devise does not look): the link still only sets a password.
      return resetPasswordMail(site, to, who.username, token);
    }
    case "admin_report": {
      if (who.disabled) return null;
      const r = await db.all<{ target: string; target_domain: string | null; reporter: string; reporter_domain: string | null; comment: string }>(
        sql`SELECT t.username AS target, t.domain AS target_domain, f.username AS reporter, f.domain AS reporter_domain, r.comment AS comment
          FROM reports r JOIN accounts t ON t.id = r.target_account_id JOIN accounts f ON f.id = r.account_id
          WHERE r.id = ${padId(job.reportId)} AND r.action_taken_at IS NULL`,
      );
      const row = r[0];
      if (!row) return null;
      const acct = (u: string, d: string | null) => (d ? `${u}@${d}` : u);
      return newReportMail(site, who.email, {
        target: acct(row.target, row.target_domain),
        reporter: acct(row.reporter, row.reporter_domain),
        comment: row.comment ?? "",
      });
    }
    case "admin_pending_account": {
      if (who.disabled) return null;
      const a = await db.all<{ username: string; email: string; reason: string | null }>(
        sql`SELECT a.username AS username, u.email AS email, u.reason AS reason FROM users u JOIN accounts a ON a.id = u.account_id
          WHERE u.account_id = ${padId(job.accountId)} AND u.approved = 0`,
      );
      if (!a[0]) return null;
      return pendingAccountMail(site, who.email, { username: a[0].username, email: a[0].email, reason: a[0].reason ?? "" });
    }
    case "admin_trends":
      if (who.disabled) return null;
      return trendsMail(site, who.email, job);
  }
}
