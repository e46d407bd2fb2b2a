// Collections going out (FEP-7aa9 as Mastodon 4.6 runs it): a local collection's Add, Update and Remove to its owner's
// followers and the remote accounts it features; an item's Add and Remove; our FeatureRequest to a remote account; our
// Accept or Reject of a remote collection's request for a local account; a local account's Delete of its
// FeatureAuthorization. Called by runFederate (./outbound.ts).
import type { FederateAction } from "../../effects/types";
import { collectionById, collectionDocParts, collectionItemById, itemWithCollection } from "../../queries/accounts/collections";
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
  const item = await collectionItemById(r.db, itemId);
  if (!item) return;
  const p = await collectionDocParts(r.db, item.collectionId);
  const i = p?.items.find((x) => x.id === itemId);
  if (!p?.owner.local || p.collection.uri || !i) return;
  await send(r, p.collection.accountId, addItemActivity(r.cfg, p, i), await audience(r, p.collection.accountId, i.local ? [] : [i.accountId]));
}

async function removeItem(r: Run, a: Extract<FederateAction, { kind: "collection_item_remove" }>) {
  const c = await collectionById(r.db, a.collectionId);
  if (!c || c.uri) return;
  const owner = (await accountsById(r.db, [c.accountId])).get(c.accountId);
  if (!isLocal(owner)) return;
  await send(r, owner.id, removeItemActivity(r.cfg, owner.uri, a.collectionId, a.itemId), await audience(r, owner.id, [a.accountId]));
}

/** Our FeatureRequest for a pending item of a local collection, to the featured account's own inbox. */
async function featureRequest(r: Run, itemId: string) {
  const found = await itemWithCollection(r.db, itemId);
  if (!found || found.collection.uri) return;
  const { item, collection } = found;
  if (item.state !== "pending" || !item.activityUri) return;
  const m = await accountsById(r.db, [collection.accountId, item.accountId]);
  const owner = m.get(collection.accountId);
  const featured = m.get(item.accountId);
  if (!isLocal(owner) || !isRemote(featured)) return;
  const inbox = personalInbox(featured);
  if (!inbox) return;
  await send(r, owner.id, featureRequestActivity(item.activityUri, owner.uri, featured.uri, collectionUri(r.cfg, item.collectionId)), [inbox]);
}

/** A local account's Delete of its FeatureAuthorization for a remote collection, to the collection's owner. */
async function revoke(r: Run, itemId: string) {
  const found = await itemWithCollection(r.db, itemId);
  const remoteUri = found?.collection.uri;
  if (!found || !remoteUri || found.item.state !== "revoked") return;
  const { item, collection } = found;
  const m = await accountsById(r.db, [collection.accountId, item.accountId]);
  await toAccount(r, m.get(item.accountId), m.get(collection.accountId), (l) => deleteFeatureAuthorizationActivity(l.uri, item.id, remoteUri));
}
