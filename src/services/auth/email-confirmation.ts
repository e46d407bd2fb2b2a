// Confirming an e-mail address (Devise's confirmable and reconfirmable, as Mastodon uses them): the sign-up address when
// REQUIRE_EMAIL_CONFIRMATION is on, and a new address asked for in the settings, which stays in
// `users.unconfirmed_email` (the old one signs in) until its link is followed. One link a user and purpose; a new one
// replaces it. Without a mail binding no link is made: sign-up leaves the account for staff to confirm, and a new
// address is used at once (src/services/auth/email-change.ts).
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { users } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { Env } from "../../env";
import { ApiError } from "../../lib/http/errors";
import { claimLinkStatements, findLink, isLinkAlreadyUsed, issueLink } from "./email-links";
import { normalizeEmail } from "../accounts/local-accounts";

type LinkEnv = Pick<Env, "SECRET_KEY_BASE" | "EMAIL">;

/** A sign-up confirmation link to the user's address: statements for the caller's batch, and the mail to record after. */
export async function confirmationLink(db: DB, env: LinkEnv, userId: string, email: string) {
  if (!env.EMAIL) return null;
  return issueLink(db, env.SECRET_KEY_BASE ?? "", userId, "confirm", email);
}

/** Sends a sign-up confirmation link now (sign-up, and POST /api/v1/emails/confirmations). */
export async function sendConfirmation(db: DB, fx: Effects, env: LinkEnv, userId: string, email: string, extra: Statement[] = []): Promise<boolean> {
  const link = await confirmationLink(db, env, userId, email);
  if (!link) {
    if (extra.length) await db.batch(extra as unknown as Parameters<DB["batch"]>[0]);
    return false;
  }
  await commit(db, fx, [...extra, ...link.stmts], (fx) => fx.add({ type: "mail", origin: fx.origin, mail: link.mail }));
  return true;
}

/**
 * "Didn't receive confirmation instructions?" (Mastodon's /auth/confirmation/new): records a `confirmation_resend`
 * effect and nothing else, whatever the address; the job looks it up (src/mail/run.ts runConfirmationResend).
 */
export function requestConfirmationResend(fx: Effects, env: Pick<Env, "EMAIL">, rawEmail: string): void {
  if (!env.EMAIL) return;
  const email = normalizeEmail(rawEmail);
  if (email) fx.add({ type: "confirmation_resend", origin: fx.origin, email });
}

/** The job's half: a new sign-up link for the unconfirmed user signing in with `email`, written; null for anyone else. */
export async function issueConfirmationResendLink(db: DB, secret: string, email: string): Promise<{ userId: string; email: string; token: string } | null> {
  const rows = await db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, isNull(users.confirmedAt)))
    .limit(1);
  const user = rows[0];
  if (!user) return null;
  const link = await issueLink(db, secret, user.id, "confirm", user.email);
  await db.batch(link.stmts as unknown as Parameters<DB["batch"]>[0]);
  return { userId: user.id, email: user.email, token: link.token };
}

/** Records `email` as the user's pending new address and mails it a link. */
export async function sendReconfirmation(db: DB, fx: Effects, env: LinkEnv, userId: string, email: string): Promise<void> {
  const link = await issueLink(db, env.SECRET_KEY_BASE ?? "", userId, "reconfirm", email);
  await commit(db, fx, [db.update(users).set({ unconfirmedEmail: email, updatedAt: Date.now() }).where(eq(users.id, userId)), ...link.stmts], (fx) =>
    fx.add({ type: "mail", origin: fx.origin, mail: link.mail }),
  );
}

export type ConfirmResult = { kind: "confirmed"; userId: string } | { kind: "email_changed"; userId: string; email: string };

const invalid = () => new ApiError(422, "This confirmation link is invalid or has expired.");

/**
 * Follows a confirmation link: a sign-up link confirms the account; a new address's link makes it the sign-in address
 * (unless another account took it meanwhile: 422, the link kept) and confirms the account too. The link works once.
 */
export async function confirmEmail(db: DB, token: unknown): Promise<ConfirmResult> {
  const now = Date.now();
  const link = (await findLink(db, "confirm", token, now)) ?? null;
  const relink = link ? null : await findLink(db, "reconfirm", token, now);
  const found = link ?? relink;
  if (!found) throw invalid();
  const stmts: Statement[] = [...claimLinkStatements(db, found.id, now)];
  if (link) {
    stmts.push(
      db
        .update(users)
        .set({ confirmedAt: now, updatedAt: now })
        .where(and(eq(users.id, found.userId), isNull(users.confirmedAt))),
    );
  } else {
    const taken = await db
      .select({ id: users.id })
      .from(users)
      .where(and(sql`lower(${users.email}) = ${found.email.toLowerCase()}`, ne(users.id, found.userId)))
      .limit(1);
    if (taken.length) throw new ApiError(422, "This address has been taken by another account meanwhile.");
    stmts.push(
      db
        .update(users)
        .set({ email: found.email, unconfirmedEmail: null, confirmedAt: sql`coalesce(${users.confirmedAt}, ${now})`, updatedAt: now })
        .where(eq(users.id, found.userId)),
    );
  }
  try {
    await db.batch(stmts as unknown as Parameters<DB["batch"]>[0]);
  } catch (e) {
    if (isLinkAlreadyUsed(e)) throw invalid();
    throw e;
  }
  return link ? { kind: "confirmed", userId: found.userId } : { kind: "email_changed", userId: found.userId, email: found.email };
}
