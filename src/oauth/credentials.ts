// The one check of an account's own password and second factor after sign-in's password step: the sign-in page's
// two-factor step, the password grant's `otp_attempt`, and every settings action that asks for them again (moving the
// account, changing the password or the e-mail address, deleting the account, turning two-factor off, new recovery
// codes). Each check counts:
// - per IP, in the sign-in budget (`throttleLogin`: every attempt, 25 in 5 minutes);
// - per account, whatever the IP: each factor's failures (`claimCredentialFailures`: passwords 25 an hour, codes 10 an
//   hour as Mastodon's MAX_2FA_ATTEMPTS_PER_HOUR), claimed before the factor is checked and given back when it was
//   right, so a spent budget refuses even the right password or code (429) until its window ends;
// - a failure also counts against the e-mail's sign-in failures (`countLoginFailure`, the login lockout).
// Callers check every other input of the request first and only then call this, so a right password is never
// confirmed by a request that fails for another reason (docs/security-coverage.md, P14 and P15).
// Sign-in's own password check stays in src/oauth/token.ts (`checkLogin`): strangers must not lock an owner out there.
// Confirming a new two-factor setup is not counted here: its code comes from the secret the page has just shown to the
// session making the request, so it guards nothing a guesser could learn.
import type { Ctx } from "../context";
import type { UserRow } from "../db/schema";
import { verifyPassword } from "../lib/security/crypto";
import { type CredentialFactor, claimCredentialFailures, countLoginFailure, throttleLogin } from "../http/rate-limit";
import { verifySecondFactor } from "../services/auth/two-factor";

import type { CheckCredentials, CredentialsGiven } from "../services/auth/credential-types";

export type { CheckCredentials, CredentialsGiven } from "../services/auth/credential-types";

/** Whose credentials: the user row's id, account, e-mail (for the login lockout) and password hash. */
export type CredentialOwner = Pick<UserRow, "id" | "accountId" | "email"> & { passwordHash?: string };

export async function checkCredentials(c: Ctx, who: CredentialOwner, given: CredentialsGiven, o: { ipCounted?: boolean } = {}): Promise<boolean> {
  const factors: CredentialFactor[] = [];
  if ("password" in given) factors.push("password");
  if ("otp" in given) factors.push("otp");
  if (!o.ipCounted) await throttleLogin(c);
  const settle = await claimCredentialFailures(c, who.accountId, factors);
  const pepper = c.env.SECRET_KEY_BASE ?? "";
  const db = c.get("db");
  const both = "password" in given && "otp" in given;
  // With both factors, both are always looked at, so neither the answer nor its time tells which one was wrong; the
  // code is used up only once the password proved right (a mistyped password must not burn a recovery code).
  const [password, codeOk] = await Promise.all([
    "password" in given
      ? typeof given.password === "string" && given.password !== "" && !!who.passwordHash && verifyPassword(given.password, who.passwordHash, pepper)
      : true,
    "otp" in given ? verifySecondFactor(db, pepper, who.id, given.otp, Date.now(), !both) : true,
  ]);
  const otp = both && password && codeOk ? await verifySecondFactor(db, pepper, who.id, given.otp) : codeOk;
  await settle({ password, otp });
  if (password && otp) return true;
  await countLoginFailure(c, who.email);
  return false;
}

/** The check a settings action hands its service, for the signed-in user. */
export const credentialCheck =
  (c: Ctx, user: UserRow): CheckCredentials =>
  (given) =>
    checkCredentials(c, user, given);
