// Collections received (FEP-7aa9, as Mastodon 4.6 runs it): a remote collection's FeatureRequest for a local account
// (ActivityPub::Activity::FeatureRequest: Accept with our FeatureAuthorization, or Reject), the answer to our own
// FeatureRequest (Accept#accept_feature_request!, Reject#reject_feature_request!), the Add, Update and Remove of a
// remote account's collections and of their items, and the Delete of an authorization a remote account withdraws.
import { httpUrl } from "../../../lib/http/urls";
import { decideFeatures, revokeItem } from "../../../services/relationships/collection-items";
import {
  acceptFeatureRequest,
  answerOwnRequest,
  deleteRemoteCollection,
  itemByApproval,
  remoteCollectionId,
  remoteCollectionStatement,
  removeRemoteItem,
  requestedItem,
  withdrawnFrom,
} from "../../../services/relationships/remote-collections";
import { ingestFeaturedCollection } from "../../remote/featured-collections";
import type { CollectionItemRow } from "../../../db/schema/index";
import { localItemStatement } from "../../../queries/accounts/collections";
import { sameHost } from "../../remote/normalize";
import { drop, localAccountByUri, prop, typeOf, type InboxContext } from "./context";

const COLLECTION_TYPES = new Set(["FeaturedCollection", "FeaturedItem"]);

/** FeatureRequest{object: a local account, instrument: their collection}: Accept (the account's policy lets them) or Reject. */
export async function handleFeatureRequest(ctx: InboxContext): Promise<void> {
  const { db, signer, activity, json } = ctx;
  if (!activity.id || !sameHost(activity.id, signer.uri)) return drop("feature request id not on the actor's host");
  const account = await localAccountByUri(db, activity.objectId);
  if (!account) return drop("feature request for no local account");
  const instrument = prop(json, "instrument");
  if (!instrument || !sameHost(instrument, signer.uri)) return drop("feature request without a collection of the actor");
  const known = await remoteCollectionId(db, signer.id, instrument);
  const embedded = json.instrument && typeof json.instrument === "object" ? json.instrument : null;
  const collectionId = known ?? (await ingestFeaturedCollection(ctx.r, signer, embedded ?? instrument, false));
  if (!collectionId) return drop("feature request instrument is not the actor's collection");
  const decision = (await decideFeatures(db, signer.id, [account.id])).get(account.id)?.decision;
  const withdrawn = await withdrawnFrom(db, collectionId, account.id);
  // Tern, as Mastodon, reviews no request by hand: what is not automatic is refused; a withdrawn consent stays withdrawn.
  if (decision !== "automatic" || withdrawn) {
    ctx.fx.federate({ kind: "feature_answer", accountId: account.id, requesterId: signer.id, activityUri: activity.id, itemId: null });
    return;
  }
  await acceptFeatureRequest(db, ctx.fx, signer.id, collectionId, account.id, activity.id);
}

/** Is this Accept or Reject the answer to one of our FeatureRequests (its object our request's id)? */
export async function answersFeatureRequest(ctx: InboxContext): Promise<boolean> {
  const obj = ctx.activity.object;
  if (obj && typeOf(obj) && typeOf(obj) !== "FeatureRequest") return false;
  if (!ctx.activity.objectId) return false;
  return !!(await requestedItem(ctx.db, ctx.signer.id, ctx.activity.objectId));
}

export async function handleFeatureAnswer(ctx: InboxContext, accepted: boolean): Promise<void> {
  const item = ctx.activity.objectId ? await requestedItem(ctx.db, ctx.signer.id, ctx.activity.objectId) : null;
  if (!item) return drop("answer to no feature request of ours");
  if (!accepted) {
    if (item.state === "rejected") return;
    await answerOwnRequest(ctx.db, ctx.fx, item, null);
    return;
  }
  const result = httpUrl(prop(ctx.json, "result"));
  if (!result || !sameHost(result, ctx.signer.uri)) return drop("accepted feature request without an authorization on the actor's host");
  if (item.state !== "pending") return;
  await answerOwnRequest(ctx.db, ctx.fx, item, result);
}

/** Does this Add or Remove concern the signer's collections (rather than its pinned statuses)? */
export function concernsCollections(ctx: InboxContext): boolean {
  const { activity, signer } = ctx;
  const objType = typeOf(activity.object);
  if (objType && COLLECTION_TYPES.has(objType)) return true;
  if (!activity.target) return false;
  if (signer.featuredCollectionsUrl && activity.target === signer.featuredCollectionsUrl) return true;
  return activity.target !== signer.featuredUrl && sameHost(activity.target, signer.uri) && !!activity.objectId && sameHost(activity.objectId, signer.uri);
}

/**
 * Add: a collection to the signer's featured collections (stored), or an item to one of its collections (the
 * collection fetched again, as Mastodon processes the item with the collection it is in). Remove: the collection, or
 * the item, goes.
 */
export async function handleCollectionAddRemove(ctx: InboxContext, add: boolean): Promise<void> {
  const { db, signer, activity } = ctx;
  if (!activity.objectId || !sameHost(activity.objectId, signer.uri)) return drop("collection add/remove of another host's object");
  const target = activity.target;
  const ofCollections = !!target && (target === signer.featuredCollectionsUrl || typeOf(activity.object) === "FeaturedCollection");
  if (add && ofCollections) {
    const id = await ingestFeaturedCollection(ctx.r, signer, activity.object ?? activity.objectId, false);
    if (!id) return drop("added collection unavailable");
    return;
  }
  // A Remove names its object by id alone: one of the signer's collections, else an item of the target collection.
  if (!add && (await deleteRemoteCollection(db, signer.id, activity.objectId))) return;
  if (ofCollections || !target || !sameHost(target, signer.uri)) return drop("collection add/remove of nothing known");
  if (add) {
    // The item is proven with its collection (fetched again: its list is the authority).
    const id = await ingestFeaturedCollection(ctx.r, signer, target, false);
    if (!id) return drop("collection of the added item unavailable");
    return;
  }
  if (!(await removeRemoteItem(db, signer.id, target, activity.objectId))) return drop("removed item of an unknown collection");
}

/** Update{FeaturedCollection}: stored again, and the local accounts it features hear of it. */
export async function handleCollectionUpdate(ctx: InboxContext): Promise<void> {
  const { signer, activity } = ctx;
  if (!activity.object || !activity.objectId || !sameHost(activity.objectId, signer.uri)) return drop("collection update of another host");
  const id = await ingestFeaturedCollection(ctx.r, signer, activity.object, true);
  if (!id) return drop("updated collection unavailable");
}

/** What a Delete may be about besides a status, read in the dispatcher's batch (collectionDeleteStatements). */
export interface CollectionDeleteReads {
  item: CollectionItemRow | null;
  collection: boolean;
}

/** The reads handleCollectionDelete needs, as statements for the Delete's one batch (null: not the signer's host). */
export function collectionDeleteStatements(ctx: InboxContext) {
  const uri = ctx.activity.objectId;
  if (!uri || !sameHost(uri, ctx.signer.uri)) return null;
  return [localItemStatement(ctx.db, ctx.signer.id, "approvalUri", uri), remoteCollectionStatement(ctx.db, ctx.signer.id, uri)] as const;
}

/**
 * Delete of a FeatureAuthorization by the account it names (its item in a local collection is revoked, and its
 * Remove sent), or of one of the signer's collections. False when the object is neither: a status, then. `pre`: what
 * the dispatcher's batch read already.
 */
export async function handleCollectionDelete(ctx: InboxContext, pre?: CollectionDeleteReads): Promise<boolean> {
  const { db, signer, activity } = ctx;
  const uri = activity.objectId;
  if (!uri || !sameHost(uri, signer.uri)) return false;
  const item = pre ? pre.item : await itemByApproval(db, signer.id, uri);
  if (item) {
    if (item.state !== "revoked") await revokeItem(db, ctx.fx, item, false);
    return true;
  }
  const objType = typeOf(activity.object);
  if (objType === "FeatureAuthorization") return drop("delete of an unknown feature authorization");
  if (pre && !pre.collection) return false;
  return deleteRemoteCollection(db, signer.id, uri);
}
