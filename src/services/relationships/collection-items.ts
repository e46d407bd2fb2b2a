// The accounts in a collection (Mastodon 4.6: AddAccountToCollectionService, DeleteCollectionItemService,
// RevokeCollectionItemService). Who may be added is the account's feature approval (src/policy/feature.ts): a local
// account whose policy lets the curator in is featured at once and told (`added_to_collection`); a remote one is
// asked by a FeatureRequest to its server and waits, `pending`, for the Accept or Reject
// (src/federation/inbox/handlers/feature.ts). An item's removal and a featured account's revocation are federated.
import { eq, inArray, type SQL, sql } from "drizzle-orm";
import { type DB, idList } from "../../db/client";
import { accounts, type CollectionItemRow, type CollectionRow, collections } from "../../db/schema";
import { commit } from "../../effects/commit";
import type { Effects } from "../../effects/collector";
import type { NotifyEffect } from "../../effects/types";
import { forbidden, notFound, validationFailed } from "../../lib/http/errors";
import { padId, snowflake } from "../../lib/text/ids";
import { featureDecision, type FeatureDecision } from "../../policy/feature";
import { collectionById, collectionItemById } from "../../queries/accounts/collections";
import { notificationWrite } from "../notifications/notifications";

export const MAX_COLLECTION_ITEMS = 25;

/** The collection, when the account owns it (a local one): 404 when there is none, 403 when it is someone else's. */
export async function ownCollection(db: DB, accountId: string, id: string): Promise<CollectionRow> {
  const [row] = await db.select().from(collections).where(eq(collections.id, id)).limit(1);
  if (!row) throw notFound();
  if (row.accountId !== accountId || row.uri) throw forbidden();
  return row;
}

/** Items that take a place in a collection: accepted ones, and those still waiting for their account's answer. */
const COUNTED = sql.raw(`('accepted', 'pending')`);

/** The collection's `item_count` set again from its accepted items; `collectionId` an id, or a subquery naming one. */
export function countStatement(db: DB, collectionId: string | SQL, now: number) {
  const c = typeof collectionId === "string" ? sql`${padId(collectionId)}` : collectionId;
  return db.run(sql`UPDATE collections SET updated_at = ${now},
      item_count = (SELECT count(*) FROM collection_items WHERE collection_id = ${c} AND state = 'accepted')
    WHERE id = ${c}`);
}

/** Our FeatureRequest's id for an item (FeatureRequestSerializer's `activity_uri`). */
export const featureRequestUri = (origin: string, collectionId: string, itemId: string) => `${origin}/collections/${collectionId}/items/${itemId}#request`;

/**
 * The feature decision of each account for the curator (one query: the accounts with their policy, follows both ways
 * and blocks either way); 404 when one is unknown, 403 when one may not be featured (denied, unknown, missing).
 */
export async function featureDecisions(db: DB, curatorId: string, accountIds: string[]): Promise<Map<string, { decision: FeatureDecision; remote: boolean }>> {
  const out = await decideFeatures(db, curatorId, accountIds);
  if (out.size < new Set(accountIds).size) throw notFound();
  for (const { decision } of out.values())
    if (decision !== "automatic" && decision !== "manual") throw forbidden("This account cannot be added to collections");
  return out;
}

/** The feature decision of each account found for the curator (src/policy/feature.ts), with whether it is remote. */
export async function decideFeatures(db: DB, curatorId: string, accountIds: string[]): Promise<Map<string, { decision: FeatureDecision; remote: boolean }>> {
  const out = new Map<string, { decision: FeatureDecision; remote: boolean }>();
  if (!accountIds.length) return out;
  const c = padId(curatorId);
  const a = accounts;
  // The account's id named with its table: inside the subqueries a bare "id" would be theirs (follows, blocks).
  const ref = sql.raw(`"accounts"."id"`);
  // Drizzle's own select: the ids and the stored policy come decoded as the schema says.
  const rows = await db
    .select({
      id: a.id,
      domain: a.domain,
      discoverable: a.discoverable,
      locked: a.locked,
      suspendedAt: a.suspendedAt,
      featurePolicy: a.featurePolicy,
      follows: sql<number>`EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${c} AND f.target_account_id = ${ref})`,
      followedBy: sql<number>`EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${ref} AND f.target_account_id = ${c})`,
      blocked: sql<number>`(${ref} = ${c} OR EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = ${ref} AND b.target_account_id = ${c})
        OR (b.account_id = ${c} AND b.target_account_id = ${ref})))`,
    })
    .from(a)
    .where(inArray(a.id, idList(accountIds)));
  for (const r of rows) {
    const decision = featureDecision(r, { follows: !!r.follows, followedBy: !!r.followedBy, blocked: !!r.blocked });
    out.set(r.id, { decision, remote: !!r.domain });
  }
  return out;
}

/**
 * The inserts of new items (a local account accepted and told, a remote one pending with our FeatureRequest's id),
 * each only while the collection has room (the capacity check is in the statement: two adds at once cannot pass 25
 * together). Answers the statements, the notifications' effects and the items whose FeatureRequest is to be sent.
 */
export function itemInserts(
  db: DB,
  origin: string,
  curatorId: string,
  collectionId: string,
  items: { id: string; accountId: string; remote: boolean }[],
  now: number,
) {
  const stmts = [];
  const notes: NotifyEffect[] = [];
  const requests: string[] = [];
  for (const i of items) {
    const state = i.remote ? "pending" : "accepted";
    stmts.push(
      db.all<{ id: string }>(sql`INSERT OR IGNORE INTO collection_items (id, collection_id, account_id, state, created_at, activity_uri)
        SELECT ${padId(i.id)}, ${padId(collectionId)}, ${padId(i.accountId)}, ${state}, ${now}, ${i.remote ? featureRequestUri(origin, collectionId, i.id) : null}
        WHERE (SELECT count(*) FROM collection_items WHERE collection_id = ${padId(collectionId)} AND state IN ${COUNTED}) < ${MAX_COLLECTION_ITEMS}
        RETURNING id`),
    );
    if (i.remote) requests.push(i.id);
    else {
      const note = notificationWrite(db, { recipientId: i.accountId, fromAccountId: curatorId, type: "added_to_collection", collectionId, activityId: i.id });
      stmts.push(note.statement);
      notes.push(note.effect);
    }
  }
  return { stmts, notes, requests };
}

export async function addCollectionItem(db: DB, fx: Effects, ownerId: string, collectionId: string, accountId: string): Promise<CollectionItemRow> {
  const c = await ownCollection(db, ownerId, collectionId);
  const decided = await featureDecisions(db, ownerId, [accountId]);
  const existing = await db.all(sql`SELECT 1 FROM collection_items WHERE collection_id = ${padId(c.id)} AND account_id = ${padId(accountId)}`);
  if (existing.length) throw validationFailed("Account has already been taken");
  const now = Date.now();
  const id = snowflake(now);
  const remote = decided.get(accountId)!.remote;
  const { stmts, notes, requests } = itemInserts(db, fx.origin, ownerId, c.id, [{ id, accountId, remote }], now);
  const [inserted] = (await commit(
    db,
    fx,
    [...stmts, countStatement(db, c.id, now)],
    (fx) => {
      fx.add(...notes);
      if (remote) for (const itemId of requests) fx.federate({ kind: "feature_request", itemId });
      else fx.federate({ kind: "collection_item_add", itemId: id });
    },
    { applied: (results) => (results[0] as unknown[]).length > 0 },
  )) as unknown as [{ id: string }[]];
  if (!inserted.length) throw validationFailed(`Collection items is too long (maximum is ${MAX_COLLECTION_ITEMS} items)`);
  return {
    id,
    collectionId: c.id,
    accountId,
    state: remote ? "pending" : "accepted",
    createdAt: now,
    uri: null,
    activityUri: remote ? featureRequestUri(fx.origin, c.id, id) : null,
    approvalUri: null,
  };
}

async function itemOf(db: DB, collectionId: string, itemId: string): Promise<CollectionItemRow> {
  const item = await collectionItemById(db, itemId, collectionId);
  if (!item) throw notFound();
  return item;
}

export async function removeCollectionItem(db: DB, fx: Effects, ownerId: string, collectionId: string, itemId: string): Promise<void> {
  await ownCollection(db, ownerId, collectionId);
  const item = await itemOf(db, collectionId, itemId);
  const now = Date.now();
  await commit(db, fx, [db.run(sql`DELETE FROM collection_items WHERE id = ${padId(itemId)}`), countStatement(db, collectionId, now)], (fx) => {
    if (item.state === "accepted") fx.federate({ kind: "collection_item_remove", collectionId, itemId, accountId: item.accountId });
  });
}

/**
 * The featured account takes itself out of someone's collection (RevokeCollectionItemService); the row stays, revoked,
 * so it is not added again. Of a local collection: its Remove of the FeaturedItem goes to the owner's followers; of a
 * remote one: the Delete of our FeatureAuthorization goes to its owner.
 */
export async function revokeCollectionItem(db: DB, fx: Effects, accountId: string, collectionId: string, itemId: string): Promise<void> {
  const c = await collectionById(db, collectionId);
  if (!c) throw notFound();
  const item = await itemOf(db, collectionId, itemId);
  if (item.accountId !== accountId) throw forbidden();
  if (item.state === "revoked") return;
  await revokeItem(db, fx, item, !!c.uri);
}

/** The item revoked by its account: by the local account here, or by a remote one's Delete of its authorization. */
export async function revokeItem(db: DB, fx: Effects, item: CollectionItemRow, remoteCollection: boolean): Promise<void> {
  const now = Date.now();
  await commit(
    db,
    fx,
    [
      db.run(sql`UPDATE collection_items SET state = 'revoked' WHERE id = ${padId(item.id)}`),
      db.run(sql`DELETE FROM notifications WHERE account_id = ${padId(item.accountId)} AND type = 'added_to_collection' AND activity_id = ${padId(item.id)}`),
      countStatement(db, item.collectionId, now),
    ],
    (fx) => {
      if (remoteCollection) fx.federate({ kind: "feature_revoke", itemId: item.id });
      else if (item.state === "accepted")
        fx.federate({ kind: "collection_item_remove", collectionId: item.collectionId, itemId: item.id, accountId: item.accountId });
    },
  );
}
