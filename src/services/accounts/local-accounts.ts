// Creating local accounts (sign-up, first-admin setup, tests): validation of usernames, e-mails and passwords
// (security A20, A21) and the account + user rows in one batch.
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accounts, users } from "../../db/schema";
import type { Config, Env } from "../../env";
import { accountUri, accountUrl } from "../../entities/urls";
import { hashPassword } from "../../lib/security/crypto";
import { ApiError } from "../../lib/http/errors";
import { snowflake } from "../../lib/text/ids";
import reservedUsernames from "../../lib/security/reserved-usernames.json";

/** Names no one may sign up with (shared with the operator commands, scripts/admin.mjs). */
export const RESERVED_USERNAMES = new Set<string>(reservedUsernames);

export interface NewLocalAccount {
  username: string;
  email: string;
  password: string;
  approved: boolean;
  confirmed: boolean;
  roleId?: string | null;
  locale?: string | null;
  reason?: string | null;
  signUpIp?: string | null;
  /** Setup may create the owner with a reserved name such as "admin". */
  allowReserved?: boolean;
}

export type Details = Record<string, { error: string; description: string }[]>;

function detailError(details: Details): ApiError {
  const msg = Object.entries(details)
    .flatMap(([k, v]) => v.slice(0, 1).map((d) => `${k.charAt(0).toUpperCase()}${k.slice(1)} ${d.description}`)) // each field's first error
    .join(", ");
  return new ApiError(422, `Validation failed: ${msg}`, { details });
}

export function validateUsername(username: string, allowReserved = false): string | null {
  if (!username) return "can't be blank";
  if (username.length > 30) return "is too long (maximum is 30 characters)";
  if (!/^[a-z0-9_]+$/i.test(username)) return "must contain only letters, numbers and underscores";
  if (!allowReserved && RESERVED_USERNAMES.has(username.toLowerCase())) return "is reserved";
  return null;
}

export function normalizeEmail(raw: string): string | null {
  const e = raw.trim();
  if (e.length > 254 || /[\s"%\\<>()[\],;]/.test(e)) return null;
  const m = /^([^@]+)@([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/i.exec(e);
  if (!m) return null;
  return `${m[1]}@${(m[2] ?? "").toLowerCase()}`; // both groups always participate
}

/** Sign-up's password rules (also applied by a password change, src/services/auth/password-change.ts). */
export function passwordProblem(password: string): { error: string; description: string } | null {
  if (!password) return { error: "ERR_BLANK", description: "can't be blank" };
  if (password.length < 8) return { error: "ERR_TOO_SHORT", description: "is too short (minimum is 8 characters)" };
  if (password.length > 72) return { error: "ERR_TOO_LONG", description: "is too long (maximum is 72 characters)" };
  return null;
}

const BLANK = { error: "ERR_BLANK", description: "can't be blank" };

/**
 * A username problem (validateUsername) as Mastodon's Account validations report it: a blank one fails presence only
 * (the format is checked when the username changes from the column's default, the empty string), a long one is
 * ERR_TOO_LONG, a reserved one ERR_RESERVED.
 */
function usernameErrors(problem: string): { error: string; description: string }[] {
  if (problem === "can't be blank") return [BLANK];
  if (problem === "is reserved") return [{ error: "ERR_RESERVED", description: problem }];
  if (problem.startsWith("is too long")) return [{ error: "ERR_TOO_LONG", description: problem }];
  return [{ error: "ERR_INVALID", description: problem }];
}

/**
 * Creates a local account and its user. Every invalid field is reported at once, Mastodon's way (`details` with
 * ERR_* codes), together with `extra` errors the caller found (sign-up's agreement and reason).
 */
export async function createLocalAccount(db: DB, cfg: Config, env: Pick<Env, "SECRET_KEY_BASE">, input: NewLocalAccount, extra: Details = {}) {
  const details: Details = { ...extra };
  const uErr = validateUsername(input.username, input.allowReserved);
  if (uErr) details.username = usernameErrors(uErr);
  const email = normalizeEmail(input.email);
  // As Mastodon's validators answer: a blank address is also not an address (EmailAddressValidator).
  if (!input.email.trim()) details.email = [BLANK, { error: "ERR_INVALID", description: "is invalid" }];
  else if (!email) details.email = [{ error: "ERR_INVALID", description: "is invalid" }];
  const pErr = passwordProblem(input.password);
  if (pErr) details.password = [pErr];

  // Uniqueness of whichever of the two is well formed, in the same answer as the other errors.
  const [takenName, takenEmail] = await db.batch([
    db
      .select({ id: accounts.id })
      .from(accounts)
      .where(sql`${uErr ? sql`0` : sql`1`} AND lower(${accounts.username}) = ${input.username.toLowerCase()} AND ${accounts.domain} IS NULL`)
      .limit(1),
    db
      .select({ id: users.id })
      .from(users)
      .where(sql`lower(${users.email}) = ${(email ?? "").toLowerCase()}`)
      .limit(1),
  ]);
  if (takenName.length) details.username = [{ error: "ERR_TAKEN", description: "has already been taken" }];
  if (email && takenEmail.length) details.email = [{ error: "ERR_TAKEN", description: "has already been taken" }];
  if (Object.keys(details).length) throw detailError(details);

  const now = Date.now();
  const accountId = snowflake(now);
  const userId = snowflake(now);
  const passwordHash = await hashPassword(input.password, env.SECRET_KEY_BASE ?? "");
  const username = input.username;
  try {
    await db.batch([
      db.insert(accounts).values({
        id: accountId,
        username,
        domain: null,
        uri: accountUri(cfg, username),
        url: accountUrl(cfg, username),
        inboxUrl: `${accountUri(cfg, username)}/inbox`,
        sharedInboxUrl: `${cfg.origin}/inbox`,
        outboxUrl: `${accountUri(cfg, username)}/outbox`,
        followersUrl: `${accountUri(cfg, username)}/followers`,
        followingUrl: `${accountUri(cfg, username)}/following`,
        featuredUrl: `${accountUri(cfg, username)}/collections/featured`,
        featuredTagsUrl: `${accountUri(cfg, username)}/collections/tags`,
        discoverable: null,
        createdAt: now,
        updatedAt: now,
      }),
      db.insert(users).values({
        id: userId,
        accountId,
        email: email!,
        passwordHash,
        confirmedAt: input.confirmed ? now : null,
        approved: input.approved,
        roleId: input.roleId ?? null,
        locale: input.locale ?? null,
        reason: input.reason ?? null,
        signUpIp: input.signUpIp ?? null,
        createdAt: now,
        updatedAt: now,
      }),
    ]);
  } catch (e) {
    // A concurrent sign-up took the name or e-mail between the check and the insert.
    if (String(e).includes("UNIQUE")) throw detailError({ username: [{ error: "ERR_TAKEN", description: "has already been taken" }] });
    throw e;
  }
  return { accountId, userId };
}
