// Changing the sign-in e-mail address from the settings, with the current password, after the same checks as sign-up:
// well-formed, not taken, not under an e-mail domain block or a canonical e-mail block (src/services/admin/blocks/email-blocks.ts).
// As Mastodon (Devise reconfirmable), the new address waits in `unconfirmed_email` and is mailed a link; the old one
// signs in until the link is followed (src/services/auth/email-confirmation.ts). Without a mail binding nothing can
// be confirmed, so the new address is used at once, and the page says so.
import { and, eq, ne, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { users, type UserRow } from "../../db/schema";
import { ApiError } from "../../lib/http/errors";
import type { CheckCredentials } from "./credential-types";
import { emailBlockQueries } from "../admin/blocks/email-blocks";
import { normalizeEmail } from "../accounts/local-accounts";
import type { Effects } from "../../effects/collector";
import type { Env } from "../../env";
import { sendReconfirmation } from "./email-confirmation";

const refused = (msg: string) => new ApiError(422, msg);

/**
 * The current password is checked last (`check`, with its budgets), so a refused address does not confirm it. Returns
 * the address and whether it awaits its confirmation link.
 */
export async function changeEmail(
  db: DB,
  fx: Effects,
  env: Pick<Env, "SECRET_KEY_BASE" | "EMAIL">,
  check: CheckCredentials,
  user: UserRow,
  input: { email: unknown; password: unknown },
): Promise<{ email: string; pending: boolean }> {
  const email = normalizeEmail(typeof input.email === "string" ? input.email : "");
  if (!email) throw refused("E-mail address is invalid");
  if (email.toLowerCase() === user.email.toLowerCase()) throw refused("That is already your e-mail address");
  const [domainBlocked, canonicalBlocked, taken] = await db.batch([
    ...(await emailBlockQueries(db, email)),
    db
      .select({ id: users.id })
      .from(users)
      .where(and(sql`lower(${users.email}) = ${email.toLowerCase()}`, ne(users.id, user.id)))
      .limit(1),
  ]);
  if (domainBlocked.length) throw refused("E-mail address uses a disallowed e-mail provider");
  // A blocked canonical address is worded as taken, as Mastodon does, so the block is not revealed.
  if (canonicalBlocked.length || taken.length) throw refused("E-mail address has already been taken");
  if (!(await check({ password: input.password }))) throw refused("The current password is wrong.");
  if (env.EMAIL) {
    await sendReconfirmation(db, fx, env, user.id, email);
    return { email, pending: true };
  }
  await db.update(users).set({ email, unconfirmedEmail: null, updatedAt: Date.now() }).where(eq(users.id, user.id));
  return { email, pending: false };
}
