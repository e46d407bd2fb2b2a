// The instance actor (Mastodon's /actor, an Application): signs Tern's GETs and server-level Flags. It is an
// accounts row with a username no person can register ([a-z0-9_] only), made on first need.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { accountKeys, accounts } from "../../db/schema/index";
import type { Config } from "../../env";
import { snowflake } from "../../lib/text/ids";
import { ensureActorKeys } from "../signing/actor-keys";
import { accountRows } from "../../db/table-rows";

export const INSTANCE_ACTOR_USERNAME = "instance.actor";

export async function instanceActorAccount(db: DB, cfg: Config) {
  const find = () => accountRows(db, { where: and(eq(accounts.username, INSTANCE_ACTOR_USERNAME), isNull(accounts.domain)), limit: 1 });
  let [row] = await find();
  if (!row) {
    const now = Date.now();
    const uri = `${cfg.origin}/actor`;
    await db
      .insert(accounts)
      .values({
        id: snowflake(now),
        username: INSTANCE_ACTOR_USERNAME,
        domain: null,
        actorType: "Application",
        locked: true,
        uri,
        url: `${cfg.origin}/about`,
        inboxUrl: `${uri}/inbox`,
        sharedInboxUrl: `${cfg.origin}/inbox`,
        outboxUrl: `${uri}/outbox`,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
    [row] = await find();
    // Inserted just above, or by a concurrent request whose insert won: either way the row exists now.
    if (!row) throw new Error("instance actor row missing after insert");
  }
  return row;
}

export async function instanceActorKey(db: DB, cfg: Config): Promise<{ keyId: string; privateKeyPem: string; publicKeyPem: string; uri: string }> {
  // Once made, the actor and its key are read in one batch (issue 12: round trips of a fetch of an unknown actor).
  const [rows, stored] = await db.batch([
    db
      .select({ uri: accounts.uri, publicKeyPem: accounts.publicKeyPem })
      .from(accounts)
      .where(and(eq(accounts.username, INSTANCE_ACTOR_USERNAME), isNull(accounts.domain)))
      .limit(1),
    db
      .select({ pem: accountKeys.privateKeyPem })
      .from(accountKeys)
      .where(sql`${accountKeys.accountId} = (SELECT a.id FROM accounts a WHERE a.username = ${INSTANCE_ACTOR_USERNAME} AND a.domain IS NULL LIMIT 1)`),
  ]);
  const found = rows[0];
  if (found?.publicKeyPem && stored[0]?.pem) {
    return { keyId: `${found.uri}#main-key`, uri: found.uri, publicKeyPem: found.publicKeyPem, privateKeyPem: stored[0].pem };
  }
  const actor = await instanceActorAccount(db, cfg);
  const keys = await ensureActorKeys(db, actor.id);
  return { keyId: `${actor.uri}#main-key`, uri: actor.uri, ...keys };
}
