// Changing the sign-in e-mail address from the settings, with the current password. Mastodon (Devise reconfirmable)
// keeps the new address unconfirmed and mails it a link; Tern sends no mail (Workers have no mail service), so the new
// address takes effect at once and the account stays confirmed, after the same checks as sign-up: well-formed, not
// taken, not under an e-mail domain block or a canonical e-mail block (src/services/admin/email-blocks.ts).
import { and, eq, ne, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { users, type UserRow } from "../../db/schema";
import { ApiError } from "../../lib/http/errors";
import type { CheckCredentials } from "./credentials";
import { emailBlockQueries } from "../admin/email-blocks";
import { normalizeEmail } from "./local-accounts";

const refused = (msg: string) => new ApiError(422, msg);

/** The current password is checked last (`check`, with its budgets), so a refused address does not confirm it. */
export async function changeEmail(db: DB, check: CheckCredentials, user: UserRow, input: { email: unknown; password: unknown }): Promise<string> {
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
  await db.update(users).set({ email, updatedAt: Date.now() }).where(eq(users.id, user.id));
  return email;
}
