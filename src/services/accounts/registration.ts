// Sign-up through the API (POST /api/v1/accounts, Mastodon's AppSignUpService), e-mail confirmation resends, and the
// first-owner setup. The registration mode comes in through `cfg` (so each mode can be tested without changing env),
// unless the admin settings page stored one.
import { and, eq, ne, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { instanceSettings, users } from "../../db/schema";
import type { Config, Env } from "../../env";
import { ApiError, forbidden, validationFailed } from "../../lib/http/errors";
import type { Effects } from "../../effects/collector";
import { notifyStaffOfSignUp } from "../admin/accounts";
import { emailBlockQueries } from "../admin/blocks/email-blocks";
import { activeIpRulesQuery, strongestIpRule } from "../admin/blocks/ip-blocks";
import { registrationsMode, SETTING, toSettings } from "../instance/instance";
import { createLocalAccount, type Details, normalizeEmail } from "./local-accounts";
import { issueToken, type IssuedToken } from "../auth/tokens";
import { sendConfirmation } from "../auth/email-confirmation";

export const OWNER_ROLE_ID = "3";

export interface SignUpInput {
  username?: string;
  email?: string;
  password?: string;
  agreement?: boolean;
  locale?: string;
  reason?: string;
}

export interface SignUpApp {
  applicationId: string;
  scopes: string[];
}

/**
 * Creates the user and returns a token for the app that signed it up, with that app token's scopes.
 * open → approved; approval → pending (the token works only once approved); closed → 403.
 * Admin blocks (Mastodon's RegistrationHelper#ip_blocked? and UserEmailValidator): an IP rule sign_up_block or
 * no_access → 403; sign_up_requires_approval → pending; a blocked e-mail domain (or parent domain) → 422 ERR_BLOCKED;
 * a blocked canonical e-mail → 422 ERR_TAKEN (as Mastodon words it, so the block is not revealed).
 */
export async function registerAccount(
  db: DB,
  fx: Effects,
  cfg: Config,
  env: Pick<Env, "SECRET_KEY_BASE" | "EMAIL">,
  app: SignUpApp,
  input: SignUpInput,
  ip: string | null,
): Promise<IssuedToken> {
  // The mode set on the admin settings page, if any, is read in the same batch as the blocks.
  const [modeRows, ipRules, domainBlocked, canonicalBlocked] = await db.batch([
    db.select({ key: instanceSettings.key, value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.key, SETTING.registrationsMode)),
    activeIpRulesQuery(db),
    ...(await emailBlockQueries(db, input.email ?? "")),
  ]);
  const mode = registrationsMode(cfg, toSettings(modeRows));
  if (mode === "closed") throw forbidden();
  const ipRule = strongestIpRule(ipRules, ip);
  if (ipRule === "sign_up_block" || ipRule === "no_access") throw forbidden();
  const details: Details = {};
  if (domainBlocked.length) details.email = [{ error: "ERR_BLOCKED", description: "uses a disallowed e-mail provider" }];
  else if (canonicalBlocked.length) details.email = [{ error: "ERR_TAKEN", description: "has already been taken" }];
  if (input.agreement !== true) details.agreement = [{ error: "ERR_ACCEPTED", description: "must be accepted" }];
  const reason = input.reason?.trim() ?? "";
  if (mode === "approval" && !reason) details.reason = [{ error: "ERR_BLANK", description: "can't be blank" }];
  // These errors go out with the account fields' own, all in one answer.
  const approved = mode === "open" && ipRule !== "sign_up_requires_approval";
  const { userId, accountId } = await createLocalAccount(
    db,
    cfg,
    env,
    {
      username: input.username ?? "",
      email: input.email ?? "",
      password: input.password ?? "",
      approved,
      confirmed: !cfg.requireEmailConfirmation,
      locale: input.locale || null,
      reason: reason || null,
      signUpIp: ip,
    },
    details,
  );
  // Sign-up notices to staff are recorded after the account's own batch (createLocalAccount) and travel by the send
  // only (src/effects/commit.ts); the account, and its confirmation mail (sendConfirmation), do not depend on them.
  await notifyStaffOfSignUp(db, fx, accountId);
  // Mastodon's AdminMailer#new_pending_account, to staff who want it (src/mail/staff-notices.ts).
  if (!approved) fx.add({ type: "mail_staff", origin: fx.origin, notice: { kind: "pending_account", accountId } });
  // The confirmation link (Devise's confirmable); without a mail binding staff confirm the account instead.
  if (cfg.requireEmailConfirmation) await sendConfirmation(db, fx, env, userId, normalizeEmail(input.email ?? "") ?? input.email ?? "");
  return issueToken(db, env.SECRET_KEY_BASE ?? "", { applicationId: app.applicationId, userId, scopes: app.scopes, reuse: false });
}

/**
 * POST /api/v1/emails/confirmations: a new confirmation link (to `email` when given, which becomes the account's
 * address first, as Mastodon does). Without a mail binding the address is still recorded and nothing is sent.
 */
export async function resendConfirmation(
  db: DB,
  fx: Effects,
  env: Pick<Env, "SECRET_KEY_BASE" | "EMAIL">,
  user: { id: string; email: string; confirmedAt: number | null },
  email: string | undefined,
): Promise<void> {
  if (user.confirmedAt) throw forbidden("This method is only available while the e-mail is awaiting confirmation");
  if (email === undefined || email === "") {
    await sendConfirmation(db, fx, env, user.id, user.email);
    return;
  }
  const normalized = normalizeEmail(email);
  if (!normalized)
    throw new ApiError(422, "Validation failed: Email is invalid", { details: { email: [{ error: "ERR_INVALID", description: "is invalid" }] } });
  const taken = await db
    .select({ id: users.id })
    .from(users)
    .where(and(sql`lower(${users.email}) = ${normalized.toLowerCase()}`, ne(users.id, user.id)))
    .limit(1);
  if (taken.length) throw validationFailed("Email has already been taken");
  await sendConfirmation(db, fx, env, user.id, normalized, [db.update(users).set({ email: normalized, updatedAt: Date.now() }).where(eq(users.id, user.id))]);
}

export async function ownerExists(db: DB): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).where(eq(users.roleId, OWNER_ROLE_ID)).limit(1);
  return rows.length > 0;
}

export async function createOwner(db: DB, cfg: Config, env: Pick<Env, "SECRET_KEY_BASE">, input: { username: string; email: string; password: string }) {
  return createLocalAccount(db, cfg, env, { ...input, approved: true, confirmed: true, roleId: OWNER_ROLE_ID, allowReserved: true });
}
