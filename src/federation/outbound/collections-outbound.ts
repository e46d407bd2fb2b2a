// Collections going out (FEP-7aa9 as Mastodon 4.6 runs it): a local collection's Add, Update and Remove to its owner's
// followers and the remote accounts it features; an item's Add and Remove; our FeatureRequest to a remote account; our
// Accept or Reject of a remote collection's request for a local account; a local account's Delete of its
// FeatureAuthorization. Called by runFederate (./outbound.ts).
import { sql } from "drizzle-orm";
import type { FederateAction } from "../../effects/types";
import { padId, unpadId } from "../../lib/text/ids";
import { collectionDocParts } from "../../queries/accounts/collections";
import { itemRow } from "../../services/relationships/collection-items";
import { collectionUri } from "../../entities/urls";
import {
  addCollectionActivity,
  addItemActivity,
  deleteFeatureAuthorizationActivity,
  featureAnswerActivity,
  featureRequestActivity,
  removeCollectionActivity,
  removeItemActivity,
  updateCollectionActivity,
} from "./collection-doc";
import { accountsById, isLocal, isRemote, send, toAccount, type Run } from "./outbound-send";
import { followerInboxes, personalInbox, remoteInboxes } from "./recipients";

type CollectionKind =
  | "collection_add"
  | "collection_update"
  | "collection_remove"
  | "collection_item_add"
  | "collection_item_remove"
  | "feature_request"
  | "feature_answer"
  | "feature_revoke";
type CollectionAction = Extract<FederateAction, { kind: CollectionKind }>;

export async function runCollectionFederate(r: Run, a: CollectionAction): Promise<void> {
  switch (a.kind) {
    case "collection_add":
    case "collection_update":
      return collection(r, a.collectionId, a.kind === "collection_add");
    case "collection_remove":
      return removeCollection(r, a);
    case "collection_item_add":
      return addItem(r, a.itemId);
    case "collection_item_remove":
      return removeItem(r, a);
    case "feature_request":
      return featureRequest(r, a.itemId);
    case "feature_answer": {
      const m = await accountsById(r.db, [a.accountId, a.requesterId]);
      return toAccount(r, m.get(a.accountId), m.get(a.requesterId), (l, t) => featureAnswerActivity(l.uri, t.uri, a.activityUri, a.itemId));
    }
    case "feature_revoke":
      return revoke(r, a.itemId);
  }
}

/** The owner's followers and the remote accounts named: who hears of a collection. */
async function audience(r: Run, ownerId: string, featured: string[]): Promise<string[]> {
  const m = await accountsById(r.db, featured);
  return [...new Set([...(await followerInboxes(r.db, ownerId)), ...remoteInboxes([...m.values()].filter((x) => isRemote(x)))])];
}

async function collection(r: Run, collectionId: string, created: boolean) {
  const p = await collectionDocParts(r.db, collectionId);
  if (!p?.owner.local || p.owner.suspended || p.collection.uri) return;
  const remote = p.items.filter((i) => !i.local).map((i) => i.accountId);
  const activity = created ? addCollectionActivity(r.cfg, p) : updateCollectionActivity(r.cfg, p);
  await send(r, p.collection.accountId, activity, await audience(r, p.collection.accountId, remote));
}

async function removeCollection(r: Run, a: Extract<FederateAction, { kind: "collection_remove" }>) {
  const owner = (await accountsById(r.db, [a.accountId])).get(a.accountId);
  if (!isLocal(owner)) return;
  await send(r, owner.id, removeCollectionActivity(r.cfg, owner.uri, a.collectionId), await audience(r, owner.id, a.alsoTo));
}

async function addItem(r: Run, itemId: string) {
  const [row] = await r.db.all<Record<string, unknown>>(sql`SELECT * FROM collection_items WHERE id = ${padId(itemId)}`);
  if (!row) return;
  const item = itemRow(row);
  const p = await collectionDocParts(r.db, item.collectionId);
  const i = p?.items.find((x) => x.id === itemId);
  if (!p?.owner.local || p.collection.uri || !i) return;
  await send(r, p.collection.accountId, addItemActivity(r.cfg, p, i), await audience(r, p.collection.accountId, i.local ? [] : [i.accountId]));
}

async function removeItem(r: Run, a: Extract<FederateAction, { kind: "collection_item_remove" }>) {
  const [c] = await r.db.all<{ account_id: string; uri: string | null }>(sql`SELECT account_id, uri FROM collections WHERE id = ${padId(a.collectionId)}`);
  if (!c || c.uri) return;
  const ownerId = unpadId(c.account_id);
  const owner = (await accountsById(r.db, [ownerId])).get(ownerId);
  if (!isLocal(owner)) return;
  await send(r, owner.id, removeItemActivity(r.cfg, owner.uri, a.collectionId, a.itemId), await audience(r, owner.id, [a.accountId]));
}

/** Our FeatureRequest for a pending item of a local collection, to the featured account's own inbox. */
async function featureRequest(r: Run, itemId: string) {
  const [row] = await r.db.all<Record<string, unknown>>(sql`SELECT * FROM collection_items WHERE id = ${padId(itemId)}`);
  if (!row) return;
  const item = itemRow(row);
  if (item.state !== "pending" || !item.activityUri) return;
  const [c] = await r.db.all<{ account_id: string; uri: string | null }>(sql`SELECT account_id, uri FROM collections WHERE id = ${padId(item.collectionId)}`);
  if (!c || c.uri) return;
  const ownerId = unpadId(c.account_id);
  const m = await accountsById(r.db, [ownerId, item.accountId]);
  const owner = m.get(ownerId);
  const featured = m.get(item.accountId);
  if (!isLocal(owner) || !isRemote(featured)) return;
  const inbox = personalInbox(featured);
  if (!inbox) return;
  await send(r, owner.id, featureRequestActivity(item.activityUri, owner.uri, featured.uri, collectionUri(r.cfg, item.collectionId)), [inbox]);
}

/** A local account's Delete of its FeatureAuthorization for a remote collection, to the collection's owner. */
async function revoke(r: Run, itemId: string) {
  const [row] = await r.db.all<Record<string, unknown>>(sql`SELECT * FROM collection_items WHERE id = ${padId(itemId)}`);
  if (!row) return;
  const item = itemRow(row);
  const [c] = await r.db.all<{ account_id: string; uri: string | null }>(sql`SELECT account_id, uri FROM collections WHERE id = ${padId(item.collectionId)}`);
  if (item.state !== "revoked" || !c?.uri) return;
  const ownerId = unpadId(c.account_id);
  const m = await accountsById(r.db, [ownerId, item.accountId]);
  const owner = m.get(ownerId);
  const featured = m.get(item.accountId);
  await toAccount(r, featured, owner, (l) => deleteFeatureAuthorizationActivity(l.uri, item.id, c.uri!));
}
