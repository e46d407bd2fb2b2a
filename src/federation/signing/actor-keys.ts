// Local actors' RSA keys, made on first need (sign-up stays cheap: RSA-2048 generation costs tens of ms of CPU).
// Two requests racing to make a key both write with "only if still empty"; both then read back the winner.
import { eq, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountKeys, accounts } from "../../db/schema/index";
import { padId } from "../../lib/text/ids";
import { generateKeyPair } from "./keys";

export async function ensureActorKeys(db: DB, accountId: string): Promise<{ publicKeyPem: string; privateKeyPem: string }> {
  const read = async () => {
    const [rows, keys] = await db.batch([
      db.select({ pem: accounts.publicKeyPem }).from(accounts).where(eq(accounts.id, accountId)),
      db.select({ pem: accountKeys.privateKeyPem }).from(accountKeys).where(eq(accountKeys.accountId, accountId)),
    ]);
    return rows[0]?.pem && keys[0]?.pem ? { publicKeyPem: rows[0].pem, privateKeyPem: keys[0].pem } : null;
  };
  const existing = await read();
  if (existing) return existing;
  const pair = await generateKeyPair();
  const id = padId(accountId);
  await db.run(sql`INSERT OR IGNORE INTO account_keys (account_id, private_key_pem) VALUES (${id}, ${pair.privateKeyPem})`);
  // The public half must match the private half that won the INSERT OR IGNORE race.
  const won = await db.select({ pem: accountKeys.privateKeyPem }).from(accountKeys).where(eq(accountKeys.accountId, accountId));
  if (won[0]?.pem === pair.privateKeyPem) {
    await db.run(sql`UPDATE accounts SET public_key_pem = ${pair.publicKeyPem}, public_key_id = uri || '#main-key' WHERE id = ${id}`);
    return pair;
  }
  for (let i = 0; i < 5; i++) {
    const r = await read();
    if (r) return r;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error("actor key not available");
}
