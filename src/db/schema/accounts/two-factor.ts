// Two-factor sign-in: migrations/0024_two_factor.sql (src/services/auth/two-factor.ts).
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { id, ms } from "../types";

/** A user's TOTP secret (sealed under SECRET_KEY_BASE); `enabledAt` null while the setup awaits its first code. */
export const userTwoFactor = lazyTable(() =>
  sqliteTable("user_two_factor", {
    userId: id("user_id").primaryKey(),
    otpSecret: text("otp_secret").notNull(),
    enabledAt: ms("enabled_at"),
    /** The last RFC 6238 time step accepted: a code is never accepted twice. */
    consumedTimestep: integer("consumed_timestep"),
    createdAt: ms("created_at").notNull(),
  }),
);

/** Recovery codes, HMAC-SHA-256 under SECRET_KEY_BASE; a used code's row is deleted. */
export const otpBackupCodes = lazyTable(() =>
  sqliteTable(
    "otp_backup_codes",
    {
      userId: id("user_id").notNull(),
      codeHash: text("code_hash").notNull(),
    },
    (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
  ),
);

/** The sign-in page's second step: the password was right, the code is awaited. */
export const webSignInChallenges = lazyTable(() =>
  sqliteTable(
    "web_sign_in_challenges",
    {
      idHash: text("id_hash").primaryKey(),
      userId: id("user_id").notNull(),
      csrfToken: text("csrf_token").notNull(),
      returnTo: text("return_to").notNull(),
      attempts: integer("attempts").notNull().default(0),
      expiresAt: integer("expires_at").notNull(),
    },
    (t) => [index("web_sign_in_challenges_user").on(t.userId)],
  ),
);
