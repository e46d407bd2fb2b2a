// Account migration, as Mastodon does it (AccountAlias, AccountMigration + MoveService, ActivityPub::Activity::Move,
// MoveWorker, UnfollowFollowWorker):
// - aliases ("moving from another account"): a local account lists its other accounts, each a handle resolved by
//   WebFinger to an actor URI; the URIs are the actor's `alsoKnownAs` (accounts.also_known_as, written in the batch that
//   writes the alias) and an Update{Person} tells followers' servers;
// - moving out: with the password and the target's handle; the target, fetched fresh, must list this account in its
//   alsoKnownAs; `moved_to_account_id` is set with an account_migrations row (30-day cooldown) in one batch; then a
//   Move {actor: old, object: old, target: new} goes to the followers' servers, an Update{Person} carries `movedTo`,
//   and the local followers are moved (`move_followers` rounds below);
// - moving in (src/federation/inbox/handlers/move.ts → acceptMove): a remote account's Move whose target (local or remote,
//   fetched fresh) lists the origin in alsoKnownAs sets the origin's moved_to and moves its local followers.
// Moving followers (moveFollowersRound, Mastodon's MoveWorker#queue_follow_unfollows! + UnfollowFollowWorker): each
// local follower of the old account follows the new one with the same options (a follow at once when the new account
// is local, as Mastodon's bypass_locked; a request and a Follow when it is remote), the new account joins every list
// the old one was in, the old follow ends (Undo{Follow} when the old account is remote), and the follower gets a
// `move` notification. A follower blocking or blocked by the new account is left as it is (FollowService refuses).
// Bounded rounds of FOLLOWERS_PER_ROUND, each recording the next (federate `move_followers`, run by outbound.ts).
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type DB, runBatch } from "../../db/client";
import { type AccountAliasRow, type AccountMigrationRow, type AccountRow, accountAliases, accountMigrations, accounts, type UserRow } from "../../db/schema";
import { newActivityUri, type Effects } from "../../effects/collector";
import { commit } from "../../effects/commit";
import type { NotifyEffect } from "../../effects/types";
import type { Config } from "../../env";
import { ApiError, forbidden, notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { remoteQuery, resolveRemoteAccount } from "../../federation/remote/resolve";
import { ResolveError, resolveActor } from "../../federation/remote/remote-accounts";
import type { CheckCredentials } from "../auth/credential-types";
import { endFollow, exec } from "../relationships/follows";
import { notificationWrite } from "../notifications/notifications";
import { accountRows } from "../../db/table-rows";
import { localAccountByUsername } from "../../queries/accounts/accounts";

/** Mastodon's AccountMigration::COOLDOWN_PERIOD. */
export const MIGRATION_COOLDOWN_MS = 30 * 24 * 3600_000;
/** Aliases per account (Mastodon has no cap; the actor document should stay small). */
export const MAX_ALIASES = 20;
/** Local followers moved per `move_followers` round (each takes about eight statements of one batch). */
export const FOLLOWERS_PER_ROUND = 50;

// ---- reading ----

/** The account `a` moved to, when it moved (one query, none when it did not). */
export async function movedAccountOf(db: DB, a: Pick<AccountRow, "movedToAccountId">): Promise<AccountRow | null> {
  if (!a.movedToAccountId) return null;
  const [row] = await accountRows(db, { where: eq(accounts.id, a.movedToAccountId), limit: 1 });
  return row && !row.suspendedAt ? row : null;
}

/** The actor id of the account `a` moved to (the actor document's `movedTo`), or null. */
export async function movedToUri(db: DB, a: Pick<AccountRow, "movedToAccountId">): Promise<string | null> {
  return (await movedAccountOf(db, a))?.uri ?? null;
}

export function listAliases(db: DB, accountId: string): Promise<AccountAliasRow[]> {
  return db.select().from(accountAliases).where(eq(accountAliases.accountId, accountId)).orderBy(desc(accountAliases.id)).limit(MAX_ALIASES);
}

export interface MigrationState {
  movedTo: AccountRow | null;
  migrations: AccountMigrationRow[];
  /** When the next move is allowed (ms), or null when it is now. */
  cooldownUntil: number | null;
}

export async function migrationState(db: DB, account: AccountRow): Promise<MigrationState> {
  const [migrations, moved] = await Promise.all([
    db.select().from(accountMigrations).where(eq(accountMigrations.accountId, account.id)).orderBy(desc(accountMigrations.createdAt)).limit(20),
    movedAccountOf(db, account),
  ]);
  const last = migrations[0];
  const until = last ? last.createdAt + MIGRATION_COOLDOWN_MS : null;
  return { movedTo: moved, migrations, cooldownUntil: until && until > Date.now() ? until : null };
}

/** The account as stored now (after a move in the same request) with its migration state. */
export async function currentMigrationState(db: DB, fallback: AccountRow): Promise<{ account: AccountRow; state: MigrationState }> {
  const [row] = await accountRows(db, { where: eq(accounts.id, fallback.id), limit: 1 });
  const account = row ?? fallback;
  return { account, state: await migrationState(db, account) };
}

// ---- resolving a handle ----

const str = (v: unknown) => (typeof v === "string" ? v.trim() : "");

/** A handle as typed (`@user@domain`, `user@domain`, `user` for this server) → the account, or null. */
async function accountForHandle(db: DB, cfg: Config, input: string): Promise<AccountRow | null> {
  const acct = input.replace(/^@/, "").replace(/^acct:/i, "");
  if (!acct || acct.length > 600) return null;
  const [username = "", domain] = acct.split("@", 2);
  const ours = !domain || [cfg.domain.toLowerCase(), new URL(cfg.origin).host.toLowerCase()].includes(domain.toLowerCase());
  if (ours) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(username)) return null;
    const row = await localAccountByUsername(db, username);
    return row && !row.suspendedAt && row.username !== "instance.actor" ? row : null;
  }
  const rq = remoteQuery(cfg, acct);
  if (!rq) return null;
  try {
    return await resolveRemoteAccount(db, cfg, rq);
  } catch (e) {
    if (e instanceof ResolveError) return null;
    throw e;
  }
}

/** Mastodon's pretty form of a handle: no leading @. */
const cleanAcct = (input: string) => input.replace(/^@/, "").replace(/^acct:/i, "");

// ---- aliases ----

/** The statement that rewrites an account's also_known_as from its alias rows (run after the alias change). */
function alsoKnownAsStatement(db: DB, accountId: string) {
  const id = padId(accountId);
  return exec(
    db,
    sql`UPDATE accounts SET also_known_as = (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE json_group_array(uri) END
      FROM (SELECT uri FROM account_aliases WHERE account_id = ${id} ORDER BY id)), updated_at = ${Date.now()} WHERE id = ${id}`,
  );
}

/** Adds an alias (Mastodon's AccountAlias create): 422 when the handle names no account, this one, or is listed. */
export async function addAlias(db: DB, fx: Effects, cfg: Config, account: AccountRow, input: unknown): Promise<AccountAliasRow> {
  const acct = cleanAcct(str(input));
  if (!acct) throw validationFailed("Handle can't be blank");
  const target = await accountForHandle(db, cfg, acct);
  if (!target) throw validationFailed("Handle could not find an account with that handle");
  if (target.id === account.id) throw validationFailed("Handle cannot be your own account");
  const [existing, count] = await db.batch([
    db
      .select()
      .from(accountAliases)
      .where(and(eq(accountAliases.accountId, account.id), eq(accountAliases.uri, target.uri)))
      .limit(1),
    db.select({ n: sql<number>`count(*)` }).from(accountAliases).where(eq(accountAliases.accountId, account.id)),
  ]);
  if (existing[0]) throw validationFailed("Handle is already an alias of your account");
  if ((count[0]?.n ?? 0) >= MAX_ALIASES) throw validationFailed(`You can have at most ${MAX_ALIASES} aliases`);
  const row: AccountAliasRow = { id: snowflake(), accountId: account.id, acct, uri: target.uri, createdAt: Date.now() };
  await commit(db, fx, [db.insert(accountAliases).values(row).onConflictDoNothing(), alsoKnownAsStatement(db, account.id)], (fx) =>
    fx.federate({ kind: "update_actor", accountId: account.id }),
  );
  return row;
}

/** Removes one of the account's aliases; 404 when it has no such alias. */
export async function removeAlias(db: DB, fx: Effects, account: AccountRow, aliasId: string): Promise<void> {
  const [row] = await db
    .select({ id: accountAliases.id })
    .from(accountAliases)
    .where(and(eq(accountAliases.id, aliasId), eq(accountAliases.accountId, account.id)))
    .limit(1);
  if (!row) throw notFound();
  await commit(db, fx, [db.delete(accountAliases).where(eq(accountAliases.id, row.id)), alsoKnownAsStatement(db, account.id)], (fx) =>
    fx.federate({ kind: "update_actor", accountId: account.id }),
  );
}

// ---- moving out ----

/**
 * Moves a local account to `acct` (Mastodon's Settings::MigrationsController#create + MoveService): the cooldown, the
 * target fetched fresh and listing this account in alsoKnownAs, and the password. The password is checked last
 * (`check`, src/oauth/credentials.ts, with its budgets), so a request refused for another reason answers the same
 * whether the password was right or not. Returns the target.
 */
export async function moveAccount(
  db: DB,
  fx: Effects,
  cfg: Config,
  check: CheckCredentials,
  who: { user: UserRow; account: AccountRow },
  input: { acct: unknown; password: unknown },
): Promise<AccountRow> {
  const { account } = who;
  if (account.suspendedAt) throw forbidden("This account is suspended.");
  const acct = cleanAcct(str(input.acct));
  if (!acct) throw validationFailed("Handle can't be blank");
  const [recent] = await db
    .select({ id: accountMigrations.id })
    .from(accountMigrations)
    .where(and(eq(accountMigrations.accountId, account.id), gte(accountMigrations.createdAt, Date.now() - MIGRATION_COOLDOWN_MS)))
    .limit(1);
  if (recent) throw validationFailed("You can only move your account once every 30 days");
  let target = await accountForHandle(db, cfg, acct);
  if (!target) throw validationFailed("Handle could not find an account with that handle");
  if (target.domain) {
    // Fresh: the alias may have been added a minute ago (MoveService relies on ResolveAccountService's fresh fetch).
    try {
      target = await resolveActor(db, cfg, target.uri, { refresh: true });
    } catch (e) {
      if (e instanceof ResolveError || e instanceof ApiError) throw validationFailed("Handle could not be fetched");
      throw validationFailed("Handle could not be fetched");
    }
  }
  if (target.suspendedAt) throw validationFailed("Handle could not find an account with that handle");
  if (target.id === account.id) throw validationFailed("Handle cannot be your own account");
  if (account.movedToAccountId === target.id) throw validationFailed("Your account already moved to that account");
  if (!(target.alsoKnownAs ?? []).includes(account.uri))
    throw validationFailed("That account does not list yours as an alias (alsoKnownAs): add this account as an alias there first");
  if (!(await check({ password: input.password }))) throw validationFailed("Current password is invalid");
  const now = Date.now();
  const migrationId = snowflake(now);
  await commit(
    db,
    fx,
    [
      db.update(accounts).set({ movedToAccountId: target.id, updatedAt: now }).where(eq(accounts.id, account.id)),
      db
        .insert(accountMigrations)
        .values({ id: migrationId, accountId: account.id, acct, followersCount: account.followersCount, targetAccountId: target.id, createdAt: now }),
    ],
    (fx) => {
      // The Update carries movedTo; the Move asks followers' servers to move their followers; then ours.
      fx.federate({ kind: "update_actor", accountId: account.id });
      fx.federate({ kind: "move", accountId: account.id, targetAccountId: target.id, migrationId });
      fx.federate({ kind: "move_followers", sourceAccountId: account.id, targetAccountId: target.id });
    },
  );
  return target;
}

// ---- moving in ----

/**
 * A remote account moved to `target` (its Move was checked by the handler: target fetched fresh, listing the origin in
 * alsoKnownAs): set its moved_to and move its local followers.
 */
export async function acceptMove(db: DB, fx: Effects, origin: AccountRow, target: AccountRow): Promise<void> {
  await db.update(accounts).set({ movedToAccountId: target.id }).where(eq(accounts.id, origin.id));
  fx.federate({ kind: "move_followers", sourceAccountId: origin.id, targetAccountId: target.id });
}

// ---- moving the local followers ----

interface FollowerRow {
  id: string;
  followerId: string;
  showReblogs: number;
  notify: number;
  languages: string | null;
  uri: string | null;
}

/** One round of moving the local followers of `sourceId` to `targetId`; records the next round when more are left. */
export async function moveFollowersRound(db: DB, fx: Effects, sourceId: string, targetId: string, cursor = ""): Promise<number> {
  const src = padId(sourceId);
  const tgt = padId(targetId);
  const after = cursor ? padId(cursor) : "";
  const [pair, page] = await db.batch([
    accountRows(db, { where: sql`${accounts.id} IN (${src}, ${tgt})` }),
    db.all<FollowerRow>(sql`SELECT f.id AS id, f.account_id AS followerId, f.show_reblogs AS showReblogs, f.notify AS notify,
      f.languages AS languages, f.uri AS uri
      FROM follows f JOIN accounts a ON a.id = f.account_id AND a.domain IS NULL
      WHERE f.target_account_id = ${src} AND f.id > ${after} ORDER BY f.id LIMIT ${sql.raw(String(FOLLOWERS_PER_ROUND))}`),
  ]);
  const source = pair.find((a) => a.id === sourceId);
  const target = pair.find((a) => a.id === targetId);
  if (!source || !target || target.suspendedAt || !page.length) return 0;
  const followerIds = page.map((f) => padId(String(BigInt(f.followerId))));
  const ids = JSON.stringify(followerIds);
  const [blocked, followingTarget, memberships] = await db.batch([
    db.all<{ who: string }>(sql`SELECT account_id AS who FROM blocks WHERE target_account_id = ${tgt} AND account_id IN (SELECT value FROM json_each(${ids}))
      UNION SELECT target_account_id AS who FROM blocks WHERE account_id = ${tgt} AND target_account_id IN (SELECT value FROM json_each(${ids}))`),
    db.all<{ who: string }>(sql`SELECT account_id AS who FROM follows WHERE target_account_id = ${tgt} AND account_id IN (SELECT value FROM json_each(${ids}))
      UNION SELECT account_id AS who FROM follow_requests WHERE target_account_id = ${tgt} AND account_id IN (SELECT value FROM json_each(${ids}))`),
    db.all<{ listId: string; owner: string }>(sql`SELECT la.list_id AS listId, l.account_id AS owner FROM list_accounts la JOIN lists l ON l.id = la.list_id
      WHERE la.account_id = ${src} AND l.account_id IN (SELECT value FROM json_each(${ids}))`),
  ]);
  const norm = (x: string) => String(BigInt(x));
  const blockedSet = new Set(blocked.map((b) => norm(b.who)));
  const already = new Set(followingTarget.map((b) => norm(b.who)));
  const stmts: BatchItem<"sqlite">[] = [];
  const after_: ((fx: Effects) => void)[] = [];
  const notify: NotifyEffect[] = [];
  const now = Date.now();
  let seq = 0;
  for (const f of page) {
    const followerId = norm(f.followerId);
    if (blockedSet.has(followerId)) continue;
    if (followerId !== targetId && !already.has(followerId)) {
      const row = {
        id: snowflake(now + seq++),
        accountId: followerId,
        targetAccountId: targetId,
        showReblogs: !!f.showReblogs,
        notify: !!f.notify,
        languages: f.languages ? (JSON.parse(f.languages) as string[]) : null,
        createdAt: now,
      };
      if (target.domain) {
        const followUri = newActivityUri(fx.origin);
        stmts.push(
          exec(
            db,
            sql`INSERT OR IGNORE INTO follow_requests (id, account_id, target_account_id, show_reblogs, notify, languages, uri, created_at)
          VALUES (${padId(row.id)}, ${padId(followerId)}, ${tgt}, ${row.showReblogs ? 1 : 0}, ${row.notify ? 1 : 0}, ${f.languages}, ${followUri}, ${now})`,
          ),
        );
        after_.push((fx) => fx.federate({ kind: "follow", accountId: followerId, targetAccountId: targetId, followUri }));
      } else {
        stmts.push(
          exec(
            db,
            sql`INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, languages, uri, created_at)
          VALUES (${padId(row.id)}, ${padId(followerId)}, ${tgt}, ${row.showReblogs ? 1 : 0}, ${row.notify ? 1 : 0}, ${f.languages}, NULL, ${now})`,
          ),
        );
        after_.push((fx) => fx.add({ type: "merge_feed", accountId: followerId, targetAccountId: targetId }));
      }
    }
    // Lists keep their members moved: the new account joins each of the follower's lists the old one was in (before
    // endFollow takes the old one out).
    for (const m of memberships.filter((x) => norm(x.owner) === followerId)) {
      stmts.push(
        exec(
          db,
          sql`INSERT OR IGNORE INTO list_accounts (id, list_id, account_id) VALUES (${padId(snowflake(now + seq++))}, ${padId(norm(m.listId))}, ${tgt})`,
        ),
      );
    }
    const change = endFollow(db, followerId, sourceId, { follow: { id: norm(f.id) } });
    stmts.push(...change.stmts);
    after_.push(change.effects);
    if (source.domain) after_.push((fx) => fx.federate({ kind: "undo_follow", accountId: followerId, targetAccountId: sourceId, followUri: f.uri ?? "" }));
    const note = notificationWrite(db, { recipientId: followerId, fromAccountId: sourceId, type: "move", activityId: targetId });
    stmts.push(note.statement);
    notify.push(note.effect);
  }
  if (stmts.length) await runBatch(db, stmts);
  fx.add(...notify);
  for (const run of after_) run(fx);
  const last = page[page.length - 1];
  if (page.length === FOLLOWERS_PER_ROUND && last)
    fx.federate({ kind: "move_followers", sourceAccountId: sourceId, targetAccountId: targetId, cursor: norm(last.id) });
  return page.length;
}
