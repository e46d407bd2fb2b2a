// "Delete my account" (Mastodon's Settings::DeletesController): after the password, the account is suspended and the
// login disabled at once, then its data goes as staff's deletion removes it (src/services/accounts/delete-account.ts: the same
// statements and effects, Delete{Actor} federated to every server that followed it or that it followed). As Mastodon's
// AccountDeletionWorker does for a self-deletion (reserve_email: false), the username stays reserved and the e-mail
// address is freed: the user row keeps no address and no password. The owner cannot delete their account here (the
// instance would be left without one and /setup would stay locked).
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import type { AccountRow, UserRow } from "../../db/schema";
import type { Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import { ApiError } from "../../lib/http/errors";
import { padId } from "../../lib/text/ids";
import type { CheckCredentials } from "../auth/credential-types";
import { accountDeletionEffects, startAccountDeletionStatements } from "./delete-account";
import { OWNER_ROLE_ID } from "./registration";
import { removeTwoFactorStatements } from "../auth/two-factor";

/** The password is checked last (`check`, with its budgets), so a refusal for another reason does not confirm it. */
export async function deleteOwnAccount(
  db: DB,
  fx: Effects,
  check: CheckCredentials,
  who: { user: UserRow; account: AccountRow },
  password: unknown,
): Promise<void> {
  if (who.user.roleId === OWNER_ROLE_ID) throw new ApiError(403, "The owner's account cannot be deleted.");
  if (who.account.suspendedAt) throw new ApiError(403, "This account is suspended.");
  if (!(await check({ password }))) throw new ApiError(422, "The password is wrong.");
  const now = Date.now();
  const u = padId(who.user.id);
  const record = await accountDeletionEffects(db, who.account);
  await commit(
    db,
    fx,
    [
      ...startAccountDeletionStatements(db, who.account.id, now),
      ...removeTwoFactorStatements(db, who.user.id),
      db.run(sql`DELETE FROM web_sign_in_challenges WHERE user_id = ${u}`),
      db.run(sql`UPDATE users SET email = 'deleted-' || id || '@deleted.invalid', password_hash = '', updated_at = ${now} WHERE id = ${u}`),
    ],
    record,
  );
}
