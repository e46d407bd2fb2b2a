// Processes a verified inbound activity stored in inbox_items (JOBS message "inbox"): dedupe on inbox_seen (the
// activity id, or the body's SHA-256 when there is none; a state change is neither checked nor marked: STATE_CHANGES),
// dispatch by type, then mark it seen and delete the item in one batch. Effects are idempotent on their own (unique
// uris and pairs), so a copy processed in parallel through another inbox changes nothing twice (C3, C17). Content we refuse is logged and dropped (the sender already has its
// 202); D1 or queue failures throw, so the runner retries the item (src/effects/retry.ts), its one retry owner from then
// on: a failed item is moved out of the 5-minute sweep's window (markRetried).
import {
  answersFeatureRequest,
  collectionDeleteStatements,
  concernsCollections,
  handleCollectionAddRemove,
  handleCollectionDelete,
  handleCollectionUpdate,
  handleFeatureAnswer,
  handleFeatureRequest,
} from "./handlers/feature";
import { eq, sql } from "drizzle-orm";
import { type DB, runBatch, type Statement } from "../../db/client";
import { frozenSelect, frozenSql } from "../../db/frozen";
import { accounts, inboxItems } from "../../db/schema/index";
import { readConfig, type Env } from "../../env";
import { sha256Hex } from "../../lib/security/crypto";
import { padId, snowflake } from "../../lib/text/ids";
import { firstKeptBucket, markSeenSql, seenBucket, seenCondition } from "./inbox-seen";
import { parseJsonText } from "../../lib/http/params";
import { carriedKind, Effects, runsAfterResponseHere } from "../../effects/collector";
import { handleBlock, handleDeleteActor, handleUpdateActor, liftsRemoteSuspension } from "./handlers/account";
import { handleAnnounce, handleLike } from "./handlers/announce";
import { DropActivity, type EarlyReads, type InboxContext } from "./handlers/context";
import { earlyReadsFor } from "./early-reads";
import { handleFeatured } from "./handlers/featured";
import { handleFlag } from "./handlers/flag";
import { handleMove } from "./handlers/move";
import { handleAccept, handleFollow, handleReject } from "./handlers/follow";
import { handleCreate, handleDeleteNote, handleUpdateNote, OBJECT_TYPES } from "./handlers/note";
import { handleUndo } from "./handlers/undo";
import { isRelayFollowUri } from "../outbound/relays";
import { handleRelayAnnounce, handleRelayAnswer, isRelaySigner } from "./handlers/relay";
import {
  answersQuoteRequest,
  handleDeleteAuthorization,
  handleQuoteAnswer,
  handleQuoteRequest,
  revokedQuote,
  revokedQuoteStatement,
} from "./handlers/quote-request";
import { normalizeActivity, type NormalizedActivity } from "../remote/normalize";
import type { VerifiedInbox } from "./inbox-verify";
import type { AccountRow } from "../../db/schema/index";
import type { Effect } from "../../effects/types";
import { accountDomainSql, frozenDomainSuspended, ResolveError } from "../remote/remote-accounts";
import { newResolution } from "../remote/resolve-status";
import { FetchRefused } from "../../net/safe-fetch";
import { statusRowByUri } from "../../db/table-rows";

const ACTOR_TYPES = new Set(["Person", "Service", "Application", "Group", "Organization"]);
/** Activities whose effect depends only on the current state (see processInboxItem): not deduplicated by id. */
const STATE_CHANGES = new Set(["Follow", "Accept", "Reject", "Undo", "Block", "Like", "Announce"]);

/** An Accept or Reject answers what we sent: a relay subscription, a quote request, or else a Follow. */
async function dispatchAnswer(ctx: InboxContext, accepted: boolean): Promise<void> {
  if (isRelayFollowUri(ctx.cfg, ctx.activity.objectId)) return handleRelayAnswer(ctx, accepted);
  if (await answersQuoteRequest(ctx)) return handleQuoteAnswer(ctx, accepted);
  if (await answersFeatureRequest(ctx)) return handleFeatureAnswer(ctx, accepted);
  return accepted ? handleAccept(ctx) : handleReject(ctx);
}

async function dispatch(ctx: InboxContext): Promise<void> {
  const { activity } = ctx;
  const objType = activity.object && typeof activity.object.type === "string" ? activity.object.type : null;
  switch (activity.type) {
    case "Create":
      return handleCreate(ctx);
    case "Update":
      if (objType && ACTOR_TYPES.has(objType)) return handleUpdateActor(ctx);
      if (objType && OBJECT_TYPES.has(objType)) return handleUpdateNote(ctx);
      if (!objType && activity.objectId === ctx.signer.uri) return handleUpdateActor(ctx);
      if (objType === "FeaturedCollection") return handleCollectionUpdate(ctx);
      throw new DropActivity(`update of ${objType ?? "an unknown object"}`);
    case "Delete": {
      if (activity.objectId && activity.objectId === ctx.signer.uri) return handleDeleteActor(ctx);
      // A QuoteAuthorization withdrawn (Mastodon tries a status first unless the type says which).
      if (objType === "QuoteAuthorization") return handleDeleteAuthorization(ctx, await revokedQuote(ctx));
      // A FeatureAuthorization withdrawn, or a collection deleted (a status is tried first when the type is not given).
      if (objType === "FeatureAuthorization" || objType === "FeaturedCollection") {
        if (await handleCollectionDelete(ctx)) return;
        throw new DropActivity("delete of an unknown collection");
      }
      if (!objType || !OBJECT_TYPES.has(objType)) {
        // The quote authorization it may withdraw, the status it may delete, and (on the signer's host) the feature
        // authorization or collection it may withdraw: one batch.
        const q = revokedQuoteStatement(ctx);
        if (q && activity.objectId) {
          const col = collectionDeleteStatements(ctx);
          const byUri = statusRowByUri(ctx.db, activity.objectId);
          const [revoked, status, items, owned] = col ? await ctx.db.batch([q, byUri, ...col]) : ([...(await ctx.db.batch([q, byUri])), [], []] as const);
          if (revoked[0]) return handleDeleteAuthorization(ctx, revoked[0]);
          if (!status[0] && col && (await handleCollectionDelete(ctx, { item: items[0] ?? null, collection: owned.length > 0 }))) return;
          return handleDeleteNote(ctx, status[0] ?? null);
        }
      }
      return handleDeleteNote(ctx);
    }
    case "Follow":
      return handleFollow(ctx);
    case "Accept":
    case "Reject":
      return dispatchAnswer(ctx, activity.type === "Accept");
    case "QuoteRequest":
      return handleQuoteRequest(ctx);
    case "FeatureRequest":
      return handleFeatureRequest(ctx);
    case "Undo":
      return handleUndo(ctx);
    case "Announce":
      if (await isRelaySigner(ctx)) return handleRelayAnnounce(ctx);
      return handleAnnounce(ctx);
    case "Like":
      return handleLike(ctx);
    case "Block":
      return handleBlock(ctx);
    case "Add":
    case "Remove":
      if (concernsCollections(ctx)) return handleCollectionAddRemove(ctx, activity.type === "Add");
      return handleFeatured(ctx, activity.type === "Add");
    case "Flag":
      return handleFlag(ctx);
    case "Move":
      return handleMove(ctx);
    default:
      throw new DropActivity(`unsupported activity ${activity.type.slice(0, 50)}`);
  }
}

/** Failures worth a retry: the database or the queue, not the content or the remote server. */
function isTransient(e: unknown): boolean {
  if (e instanceof DropActivity || e instanceof ResolveError || e instanceof FetchRefused) return false;
  const msg = String((e as Error)?.message ?? e);
  if (/constraint failed|SQLITE_TOOBIG|too big|syntax error|no such (table|column)|datatype mismatch/i.test(msg)) return false;
  return /D1_|SQLITE_BUSY|SQLITE_IOERR|network connection|Network connection lost|timed? ?out|overloaded|storage|internal error|reset|Queue/i.test(msg);
}

const insertItem = frozenSql(
  () =>
    sql`INSERT INTO inbox_items (id, signer_account_id, body, received_at) VALUES (${sql.placeholder("id")}, ${sql.placeholder("signer")}, ${sql.placeholder("body")}, ${sql.placeholder("at")})`,
);
const insertItemStatement = (db: DB, id: string, signerAccountId: string, body: string) =>
  db.run(insertItem(db, { id: padId(id), signer: padId(signerAccountId), body, at: Date.now() }));
// Whether an activity id was seen (the dedupe check): when the item is stored, and for an activity without an id.
const seenKey = frozenSql(() => sql`SELECT ${seenCondition(sql`${sql.placeholder("key")}`, sql.placeholder("first"))} AS seen`);
const seenKeyStatement = (db: DB, key: string) => db.all<{ seen: number }>(seenKey(db, { key, first: firstKeptBucket(Date.now()) }));

/** Keeps a verified inbound activity for the JOBS consumer (bodies up to 1 MB do not fit a queue message). */
export async function storeInboxItem(db: DB, signerAccountId: string, body: string): Promise<string> {
  const id = snowflake();
  await insertItemStatement(db, id, signerAccountId, body);
  return id;
}

/** What the POST that stored an item knew of it: its verified signer and parsed activity, and whether its id was seen. */
export interface HandedOver {
  signer: AccountRow;
  body: string;
  json: Record<string, unknown>;
  activity: NormalizedActivity;
  /** Whether inbox_seen held the activity's `id` when the item was stored (null: the activity has no id). */
  seen: boolean | null;
  /** Its handler's first reads, made with the store (early-reads.ts). */
  early?: EarlyReads;
}

/**
 * What the inbox POST hands over to its item's processing in the same invocation, carried by the `inbox` effect on the
 * request's collector (runEffect takes it): that processing then reads none of what the POST has just verified and
 * read (the item, its signer, its domain's suspension, the seen check). It lives as long as the request's collector
 * (one invocation) and is taken once; an item processed anywhere else (the queue, the sweep) is loaded from D1.
 */
export const HANDED_OVER = carriedKind<HandedOver>("inbox item handed over");

/**
 * Stores a verified activity and records its processing after the response (Effects.afterResponse). When that runs in
 * this invocation (production), the seen check goes in the same batch and what the POST knows travels with the effect:
 * one round trip for both. When the queue takes it (EFFECTS_AFTER_RESPONSE=queue), the consumer loads it from D1.
 */
export async function storeVerifiedItem(db: DB, env: Env, fx: Effects, v: VerifiedInbox): Promise<void> {
  if (!runsAfterResponseHere(env)) {
    fx.afterResponse({ type: "inbox", itemId: await storeInboxItem(db, v.signer.id, v.body), origin: fx.origin });
    return;
  }
  const id = snowflake();
  const insert = insertItemStatement(db, id, v.signer.id, v.body);
  // The handler's first reads in the same batch (early-reads.ts): its processing starts from them.
  const plan = earlyReadsFor(db, readConfig(env, fx.origin), v.activity, v.signer);
  const stmts: Statement[] = [insert];
  // The seen check, for what is taken once per id (a state change is applied by what it changes: processItem).
  const seenId = STATE_CHANGES.has(v.activity.type) ? undefined : v.activity.id;
  if (seenId) stmts.push(seenKeyStatement(db, seenId));
  const results = await runBatch(db, [...stmts, ...(plan?.stmts ?? [])]);
  const seen = seenId ? !!(results[1] as { seen: number }[])[0]?.seen : null;
  const early: EarlyReads | undefined = plan ? { type: plan.type, results: results.slice(stmts.length), note: plan.note } : undefined;
  const effect: Effect = { type: "inbox", itemId: id, origin: fx.origin };
  fx.afterResponse(effect);
  fx.carry(effect, HANDED_OVER, { signer: v.signer, body: v.body, json: v.json, activity: v.activity, seen, early });
}

// loadItem's four reads, built once per isolate (frozen.ts): every processed activity makes them. `item` is the padded id.
const signerOfItem = () => sql`(SELECT signer_account_id FROM inbox_items WHERE id = ${sql.placeholder("item")})`;
const itemById = frozenSelect((db) =>
  db
    .select()
    .from(inboxItems)
    .where(eq(inboxItems.id, sql.placeholder("item")))
    .limit(1),
);
const itemSigner = frozenSelect((db) => db.select().from(accounts).where(sql`${accounts.id} = ${signerOfItem()}`).limit(1));
const itemSignerSuspended = frozenDomainSuspended(() => accountDomainSql(signerOfItem()));
// The activity's `id` as the body states it, and whether it was seen: the dedupe check, when the id is the key.
const itemSeen = frozenSql(() => {
  const rawId = sql`(SELECT CASE WHEN json_valid(body) THEN json_extract(body, '$.id') END FROM inbox_items WHERE id = ${sql.placeholder("item")})`;
  return sql`SELECT ${rawId} AS id, ${seenCondition(rawId, sql.placeholder("first"))} AS seen`;
});

/**
 * The inbox item, its signer and whether the signer's domain is suspended: ONE batch (the signer and the domain are
 * found through the item's row in SQL).
 */
async function loadItem(db: DB, itemId: string, cfg: Pick<ReturnType<typeof readConfig>, "limitedFederation">) {
  const values = { item: padId(itemId) };
  const [items, signers, domain, seen] = await db.batch([
    itemById(db, values),
    itemSigner(db, values),
    itemSignerSuspended(db, cfg, values),
    db.all<{ id: unknown; seen: number }>(itemSeen(db, { ...values, first: firstKeptBucket(Date.now()) })),
  ]);
  const s = seen[0];
  return {
    item: items[0],
    signer: signers[0],
    domainSuspended: !!domain[0]?.suspended,
    seenById: typeof s?.id === "string" ? { id: s.id, seen: !!s.seen } : null,
  };
}

// Every processed activity ends with these: their text built once per isolate (db/frozen.ts).
const deleteItem = frozenSql(() => sql`DELETE FROM inbox_items WHERE id = ${sql.placeholder("id")}`);
const markSeen = frozenSql(markSeenSql);

// An item whose processing failed is the runner's to retry (its attempts, backoff and dead letter). The sweep
// (src/background/cron.ts requeueStaleInboxItems) takes items received 10 to 20 minutes ago, for an invocation that died
// before processing them; it used to take a failing item too, twice (two sweeps see each item), each time starting a
// line of attempts of its own: 30 runs and 3 dead letters for one item D1 kept refusing (test/integration/
// inbox-retries.test.ts). So a failure sets the item's received_at back to an hour before now, well out of that window
// (and 4 days from the housekeeping's prune, long after the runner's ~2 h): best effort, as D1 may be what failed; a
// mark lost that way lets the sweep take the item once more.
const OUT_OF_SWEEP_MS = 60 * 60 * 1000;
const markRetried = frozenSql(
  () => sql`UPDATE inbox_items SET received_at = min(received_at, ${sql.placeholder("before")}) WHERE id = ${sql.placeholder("id")}`,
);

/**
 * Processes a stored item (see processItem); what throws is retried by the runner, and the item is marked as the
 * runner's (markRetried). `handed`: what the POST that stored it handed over (HANDED_OVER), when this is its invocation.
 */
export async function processInboxItem(db: DB, env: Env, itemId: string, origin: string, fx: Effects, handed: HandedOver | null = null): Promise<void> {
  try {
    await processItem(db, env, itemId, origin, fx, handed);
  } catch (e) {
    await db.run(markRetried(db, { id: padId(itemId), before: Date.now() - OUT_OF_SWEEP_MS })).catch(() => {});
    throw e;
  }
}

/**
 * Round trips for a processed activity: the item (with its signer, domain check and, by the body's id, the seen check
 * for activities taken once per id), the handler's own reads, and its writes together with the item's seen/delete statements when the
 * handler takes them (`withFinish`; otherwise one more).
 */
async function processItem(db: DB, env: Env, itemId: string, origin: string, fx: Effects, handed: HandedOver | null): Promise<void> {
  const cfg = readConfig(env, origin);
  const finishStatements = (key: string | null): Statement[] => {
    const stmts: Statement[] = [db.run(deleteItem(db, { id: padId(itemId) }))];
    if (key) stmts.unshift(db.run(markSeen(db, { key, day: seenBucket(Date.now()) })));
    return stmts;
  };
  const finish = async (key: string | null) => {
    await runBatch(db, finishStatements(key));
  };
  let signer: AccountRow | undefined;
  let domainSuspended = false;
  let seenById: { id: string; seen: boolean } | null;
  let body: string;
  let json: unknown;
  let activity: NormalizedActivity | null;
  if (handed) {
    // Verified and read by the POST a moment ago (a suspended domain was refused there).
    ({ signer, body, json, activity } = handed);
    seenById = handed.activity.id && handed.seen !== null ? { id: handed.activity.id, seen: handed.seen } : null;
  } else {
    const loaded = await loadItem(db, itemId, cfg);
    if (!loaded.item) return;
    ({ signer, domainSuspended, seenById } = loaded);
    body = loaded.item.body;
    try {
      json = parseJsonText(body, 64);
    } catch {
      return finish(null);
    }
    activity = normalizeActivity(json);
  }
  if (!activity || !signer || activity.actor !== signer.uri) return finish(null);
  // A state change is applied whenever it is valid now, whatever its id: servers reuse ids (Hollo sends one Accept id
  // for every follow of the same follower), and follow → unfollow → follow must end following. Their handlers act
  // on the current state only (an Accept needs a pending request, a Follow of an existing follow re-accepts, an Undo
  // of nothing does nothing), so a replay of the same change changes nothing. Everything else is taken once per id,
  // and only that is marked seen (a state change's mark was a row written that nothing read).
  const onceById = !STATE_CHANGES.has(activity.type);
  const key = onceById ? (activity.id ?? `sha256:${await sha256Hex(body)}`) : null;
  if (key) {
    // Read with the item when the key is the body's own `id` (the usual case); else (no id: the body's hash) here.
    const seen = seenById && seenById.id === key ? seenById.seen : !!(await seenKeyStatement(db, key))[0]?.seen;
    if (seen) return finish(null);
  }

  // Effects are recorded on a collector of this activity's own: a transient failure retries the whole item, so they
  // are handed on only once it has been handled (or dropped after a partial write).
  const mine = new Effects(cfg.origin);
  const r = newResolution(db, cfg, mine);
  // Handed over: processed in the invocation that took it, where its effects run next (runHere), so the last batch may
  // read ahead for them; through the queue they would leave for another message.
  const done = { stmts: finishStatements(key), done: false, readAhead: !!handed };
  const ctx: InboxContext = { db, env, cfg, signer, activity, json: json as Record<string, unknown>, r, fx: mine, finish: done, early: handed?.early };
  try {
    // C19: nothing from suspended accounts or domains (a suspension may have happened after the 202), except the
    // Update that reverses a suspension the account's own server asked for.
    if (signer.suspendedAt && !liftsRemoteSuspension(ctx)) throw new DropActivity("signer suspended");
    if (signer.domain && domainSuspended) throw new DropActivity("domain suspended");
    await dispatch(ctx);
  } catch (e) {
    if (isTransient(e)) throw e;
    const level = e instanceof DropActivity ? "info" : "warn";
    console[level]("inbox: dropped", activity.type, (activity.id ?? "").slice(0, 200), e instanceof Error ? e.message : e);
  }
  if (!done.done) await finish(key);
  fx.adopt(mine);
}
