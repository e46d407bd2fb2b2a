// The single-use links Tern mails (Devise's confirmation and reset-password tokens): a link's token is 256 random bits,
// of which D1 keeps only the SHA-256 (`email_links.token_hash`), so a dump of D1 opens no link. The mail job is handed
// the token sealed under SECRET_KEY_BASE inside its `mail` effect (src/mail/run.ts); the row's id travels with it, so a
// link used or replaced before the job runs is not mailed. A link is claimed by the batch that acts on it: its first
// statement deletes the row (only while unexpired) and the second aborts the batch unless that deleted one row, so two
// uses of one link at once act once.
import { and, eq, sql } from "drizzle-orm";
import type { DB, Statement } from "../../db/client";
import { emailLinks, type EmailLinkPurpose } from "../../db/schema";
import type { MailJob } from "../../effects/types";
import { randomToken, sha256Hex } from "../../lib/security/crypto";
import { sealText } from "../../lib/security/seal";
import { snowflake } from "../../lib/text/ids";

/**
 * How long a link works. A reset: Mastodon's `config.reset_password_within = 6.hours`. A confirmation: 3 days (Devise's
 * documented `confirm_within` example; a new one can be asked for at any time).
 */
export const LINK_LIFETIME_MS: Record<EmailLinkPurpose, number> = {
  confirm: 3 * 24 * 3600_000,
  reconfirm: 3 * 24 * 3600_000,
  reset_password: 6 * 3600_000,
};

/** The label a link's token is sealed under (src/lib/security/seal.ts): only a mail job opens it. */
export const LINK_SEAL_LABEL = "email-link";

export interface IssuedLink {
  /** The statements to put in the caller's batch: the user's older link of this purpose goes, the new one is written. */
  stmts: Statement[];
  /** The mail to record (fx.add({type: "mail", mail})) once that batch committed. */
  mail: MailJob;
  /** The token itself, for a caller that mails it in this invocation (never stored). */
  token: string;
}

/** A new link of `purpose` for `userId`, to `email`. */
export async function issueLink(db: DB, secret: string, userId: string, purpose: EmailLinkPurpose, email: string, now = Date.now()): Promise<IssuedLink> {
  const token = randomToken(32);
  const id = snowflake(now);
  const stmts: Statement[] = [
    db.delete(emailLinks).where(and(eq(emailLinks.userId, userId), eq(emailLinks.purpose, purpose))),
    db.insert(emailLinks).values({
      id,
      userId,
      purpose,
      tokenHash: await sha256Hex(token),
      email,
      expiresAt: now + LINK_LIFETIME_MS[purpose],
      createdAt: now,
    }),
  ];
  return { stmts, mail: { kind: purpose, userId, linkId: id, sealed: await sealText(secret, LINK_SEAL_LABEL, token) }, token };
}

export interface FoundLink {
  id: string;
  userId: string;
  email: string;
}

/** The unexpired link of `purpose` whose token is `token`, or null (unknown, used, replaced or expired: one answer). */
export async function findLink(db: DB, purpose: EmailLinkPurpose, token: unknown, now = Date.now()): Promise<FoundLink | null> {
  if (typeof token !== "string" || token.length < 20 || token.length > 100) return null;
  const rows = await db
    .select({ id: emailLinks.id, userId: emailLinks.userId, email: emailLinks.email, expiresAt: emailLinks.expiresAt })
    .from(emailLinks)
    .where(and(eq(emailLinks.tokenHash, await sha256Hex(token)), eq(emailLinks.purpose, purpose)))
    .limit(1);
  const row = rows[0];
  return row && row.expiresAt > now ? { id: row.id, userId: row.userId, email: row.email } : null;
}

const USED_MARK = "tern: e-mail link already used";

/**
 * The first two statements of the batch that acts on a link: the link's row is deleted while unexpired, and the batch
 * fails (rolled back whole) unless that deleted exactly one row. D1 runs a batch in order on one connection, so
 * `changes()` is the DELETE's count.
 */
export function claimLinkStatements(db: DB, linkId: string, now = Date.now()): Statement[] {
  return [
    db.delete(emailLinks).where(and(eq(emailLinks.id, linkId), sql`${emailLinks.expiresAt} > ${now}`)),
    db.run(sql`SELECT json_extract('{}', CASE WHEN changes() = 1 THEN '$' ELSE ${sql.raw(`'${USED_MARK}'`)} END) AS ok`),
  ];
}

/** Whether `e` is a batch refused because its link had been used (or had expired) meanwhile. */
export function isLinkAlreadyUsed(e: unknown): boolean {
  for (let x = e, depth = 0; x && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    if (String((x as Error).message ?? x).includes(USED_MARK)) return true;
  }
  return false;
}

/** Expired links (the 5-minute cron: src/background/housekeeping.ts), a bounded number a run. */
export async function purgeExpiredLinks(db: DB, now: number, limit = 500): Promise<void> {
  await db.run(sql`DELETE FROM email_links WHERE id IN (SELECT id FROM email_links WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit})`);
}
