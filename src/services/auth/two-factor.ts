// Two-factor sign-in with TOTP (RFC 6238: SHA-1, 6 digits, 30 s, ±1 step) and 10 single-use recovery codes, as
// Mastodon's settings offer it (devise-two-factor). The secret is sealed under SECRET_KEY_BASE; recovery codes are kept
// as keyed hashes. Setting up takes two steps: a new secret is stored unconfirmed, and only a right code from it turns
// the requirement on (and gives the recovery codes, shown once). Disabling takes the password and a code.
// A code is accepted once: the time step it matched is recorded and no code of that step or an earlier one passes
// again; a recovery code's row is deleted by the statement that accepts it.
import { and, eq, isNotNull, isNull, lt, or, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { otpBackupCodes, userTwoFactor, type UserRow } from "../../db/schema";
import { ApiError } from "../../lib/http/errors";
import { toHex } from "../../lib/security/crypto";
import { keyedHash, sealText, unsealText } from "../../lib/security/seal";
import { base32Decode, base32Encode, matchTotp, otpauthUri } from "../../lib/security/totp";
import type { CheckCredentials } from "./credential-types";

export const RECOVERY_CODES = 10;
const SEAL_LABEL = "tern-otp-secret";
const CODE_LABEL = "tern-otp-backup-code";

export interface TwoFactorState {
  enabled: boolean;
  /** A secret awaits its confirming code. */
  pending: boolean;
  recoveryCodesLeft: number;
}

const refused = (msg: string) => new ApiError(422, msg);

export async function twoFactorState(db: DB, userId: string): Promise<TwoFactorState> {
  const [rows, codes] = await db.batch([
    db.select({ enabledAt: userTwoFactor.enabledAt }).from(userTwoFactor).where(eq(userTwoFactor.userId, userId)).limit(1),
    db.select({ n: sql<number>`count(*)` }).from(otpBackupCodes).where(eq(otpBackupCodes.userId, userId)),
  ]);
  const row = rows[0];
  return { enabled: !!row?.enabledAt, pending: !!row && !row.enabledAt, recoveryCodesLeft: Number(codes[0]?.n ?? 0) };
}

/** Starts (or restarts) the setup with a new 160-bit secret; refused while two-factor sign-in is on. */
export async function beginTwoFactorSetup(db: DB, pepper: string, userId: string): Promise<void> {
  const secret = base32Encode(crypto.getRandomValues(new Uint8Array(20)));
  const sealed = await sealText(pepper, SEAL_LABEL, secret);
  const now = Date.now();
  const written = await db
    .insert(userTwoFactor)
    .values({ userId, otpSecret: sealed, enabledAt: null, consumedTimestep: null, createdAt: now })
    .onConflictDoUpdate({
      target: userTwoFactor.userId,
      set: { otpSecret: sealed, consumedTimestep: null, createdAt: now },
      where: isNull(userTwoFactor.enabledAt),
    })
    .returning({ userId: userTwoFactor.userId });
  if (!written.length) throw refused("Two-factor authentication is already enabled");
}

/** The unconfirmed secret for the setup page: base32 and the otpauth:// URI. */
export async function pendingSetup(db: DB, pepper: string, user: UserRow, issuer: string): Promise<{ secret: string; uri: string } | null> {
  const rows = await db.select().from(userTwoFactor).where(eq(userTwoFactor.userId, user.id)).limit(1);
  const row = rows[0];
  if (!row || row.enabledAt) return null;
  const secret = await unsealText(pepper, SEAL_LABEL, row.otpSecret);
  if (!secret) return null;
  return { secret, uri: otpauthUri(issuer, user.email, secret) };
}

/**
 * Accepts `code` from the user's secret (enabled, or pending when `pending`), recording its time step; with `claim`
 * false only says whether it would be accepted (nothing recorded).
 */
async function acceptTotp(db: DB, pepper: string, userId: string, code: string, pending: boolean, now: number, claim = true): Promise<boolean> {
  const m = await matchStep(db, pepper, userId, code, pending, now);
  if (!m) return false;
  const { row, step } = m;
  if (!claim) return row.consumedTimestep === null || row.consumedTimestep < step;
  // Claim the step atomically: of two requests with the same code only one passes.
  const claimed = await db
    .update(userTwoFactor)
    .set(pending ? { consumedTimestep: step, enabledAt: now } : { consumedTimestep: step })
    .where(
      and(
        eq(userTwoFactor.userId, userId),
        pending ? isNull(userTwoFactor.enabledAt) : isNotNull(userTwoFactor.enabledAt),
        or(isNull(userTwoFactor.consumedTimestep), lt(userTwoFactor.consumedTimestep, step)),
      ),
    )
    .returning({ userId: userTwoFactor.userId });
  return claimed.length > 0;
}

/** The user's two-factor row (enabled, or pending when `pending`) and the time step `code` matches in it, if any. */
async function matchStep(db: DB, pepper: string, userId: string, code: string, pending: boolean, now: number) {
  const rows = await db.select().from(userTwoFactor).where(eq(userTwoFactor.userId, userId)).limit(1);
  const row = rows[0];
  if (!row || !!row.enabledAt === pending) return null;
  const secret = await unsealText(pepper, SEAL_LABEL, row.otpSecret);
  const bytes = secret ? base32Decode(secret) : null;
  if (!bytes) return null;
  const step = await matchTotp(bytes, code, now);
  return step === null ? null : { row, step };
}

/** What a refused code is told when it was right but already used (each code signs in once). */
export const USED_CODE = "This code was already used: each code works once. Wait for your app to show the next one, then enter it.";

/**
 * Whether a refused `rawCode` is a code of the user's secret whose time step was already used, so the page can say why
 * it was refused. Asked only after a refusal; records nothing.
 */
export async function codeAlreadyUsed(db: DB, pepper: string, userId: string, rawCode: unknown, now = Date.now()): Promise<boolean> {
  const code = normalizeCode(rawCode);
  if (!/^\d{6}$/.test(code)) return false;
  const m = await matchStep(db, pepper, userId, code, false, now);
  return !!m && m.row.consumedTimestep !== null && m.step <= m.row.consumedTimestep;
}

const normalizeCode = (code: unknown) => (typeof code === "string" ? code.replace(/[\s-]/g, "").toLowerCase().slice(0, 64) : "");

/** A recovery code, used up by this call when it is one of the user's (unless `use` is false). */
async function acceptRecoveryCode(db: DB, pepper: string, userId: string, code: string, use = true): Promise<boolean> {
  if (!/^[0-9a-f]{16}$/.test(code)) return false;
  const hash = await keyedHash(pepper, CODE_LABEL, code);
  const where = and(eq(otpBackupCodes.userId, userId), eq(otpBackupCodes.codeHash, hash));
  if (!use) return (await db.select({ userId: otpBackupCodes.userId }).from(otpBackupCodes).where(where).limit(1)).length > 0;
  const used = await db.delete(otpBackupCodes).where(where).returning({ userId: otpBackupCodes.userId });
  return used.length > 0;
}

/**
 * The second factor: a current TOTP code or an unused recovery code, used up by this call. With `consume` false it only
 * says whether the code would pass (src/oauth/credentials.ts checks it beside a password that may be wrong, and a
 * mistyped password must not burn a recovery code).
 */
export async function verifySecondFactor(db: DB, pepper: string, userId: string, rawCode: unknown, now = Date.now(), consume = true): Promise<boolean> {
  const code = normalizeCode(rawCode);
  if (!code) return false;
  if (/^\d{6}$/.test(code)) return acceptTotp(db, pepper, userId, code, false, now, consume);
  return acceptRecoveryCode(db, pepper, userId, code, consume);
}

/** New recovery codes replacing any old ones: the statements and the codes in clear (shown once). */
async function newRecoveryCodes(db: DB, pepper: string, userId: string) {
  const codes = Array.from({ length: RECOVERY_CODES }, () => toHex(crypto.getRandomValues(new Uint8Array(8))));
  const hashes = await Promise.all(codes.map((c) => keyedHash(pepper, CODE_LABEL, c)));
  const stmts = [
    db.delete(otpBackupCodes).where(eq(otpBackupCodes.userId, userId)),
    db.insert(otpBackupCodes).values(hashes.map((codeHash) => ({ userId, codeHash }))),
  ] as const;
  return { codes, stmts };
}

/** Confirms the setup with a code from the new secret: two-factor sign-in is on; returns the recovery codes. */
export async function confirmTwoFactor(db: DB, pepper: string, userId: string, rawCode: unknown, now = Date.now()): Promise<string[]> {
  const code = normalizeCode(rawCode);
  if (!(await acceptTotp(db, pepper, userId, code, true, now))) throw refused("The two-factor code is invalid. Check your device's clock and try again.");
  const { codes, stmts } = await newRecoveryCodes(db, pepper, userId);
  await db.batch(stmts);
  return codes;
}

/** New recovery codes (the old ones stop working), after a valid code (`check`, with the account's code budget). */
export async function regenerateRecoveryCodes(db: DB, pepper: string, check: CheckCredentials, userId: string, rawCode: unknown): Promise<string[]> {
  if (!(await check({ otp: rawCode }))) throw refused((await codeAlreadyUsed(db, pepper, userId, rawCode)) ? USED_CODE : "The two-factor code is invalid.");
  const { codes, stmts } = await newRecoveryCodes(db, pepper, userId);
  await db.batch(stmts);
  return codes;
}

/**
 * Turns two-factor sign-in off (or abandons a pending setup): the password, and a code when it is on. Both are checked
 * together (`check`, with their budgets) and refused with one message, so a wrong code does not confirm the password.
 */
export async function disableTwoFactor(db: DB, pepper: string, check: CheckCredentials, user: UserRow, password: unknown, rawCode: unknown): Promise<void> {
  const state = await twoFactorState(db, user.id);
  if (state.enabled) {
    if (!(await check({ password, otp: rawCode }))) {
      // A used code is said to be one whatever the password: that tells nothing about the password.
      throw refused((await codeAlreadyUsed(db, pepper, user.id, rawCode)) ? USED_CODE : "The password or the two-factor code is wrong.");
    }
  } else if (!(await check({ password }))) throw refused("The password is wrong.");
  await db.batch(removeTwoFactorStatements(db, user.id));
}

/** Everything two-factor about a user (for their deletion too). */
export function removeTwoFactorStatements(db: DB, userId: string) {
  return [db.delete(userTwoFactor).where(eq(userTwoFactor.userId, userId)), db.delete(otpBackupCodes).where(eq(otpBackupCodes.userId, userId))] as const;
}
