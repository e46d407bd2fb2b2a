// A local collection as ActivityPub (FEP-7aa9, as Mastodon 4.6 serializes it): the FeaturedCollection (its accepted
// items inline, as FeaturedItems), a local account's FeatureAuthorization, and the activities that carry them.
import type { Config } from "../../env";
import { collectionItemUri, collectionUri, featureAuthorizationUri, featuredCollectionsUri, tagUrl } from "../../entities/urls";
import type { CollectionDocItem, CollectionDocParts } from "../../queries/accounts/collections";
import { AS, COLLECTION_CONTEXT } from "./context";

type Obj = Record<string, unknown>;
const PUBLIC = `${AS}#Public`;

/** FeaturedItemSerializer: the account, its actor type, and its consent (ours for a local account, its server's else). */
export function featuredItemObject(cfg: Config, collectionId: string, i: CollectionDocItem): Obj {
  return {
    id: collectionItemUri(cfg, collectionId, i.id),
    type: "FeaturedItem",
    featuredObject: i.accountUri,
    featuredObjectType: i.actorType ?? "Person",
    featureAuthorization: i.local ? featureAuthorizationUri(i.accountUri, i.id) : i.approvalUri,
  };
}

/** FeaturedCollectionSerializer: summary, or summaryMap when the language is known; `topic` the hashtag. */
export function featuredCollectionObject(cfg: Config, p: CollectionDocParts): Obj {
  const c = p.collection;
  const doc: Obj = {
    id: collectionUri(cfg, c.id),
    type: "FeaturedCollection",
    totalItems: p.items.length,
    name: c.name,
    attributedTo: p.owner.uri,
    url: collectionUri(cfg, c.id),
    sensitive: c.sensitive,
    discoverable: c.discoverable,
    published: new Date(c.createdAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
    updated: new Date(c.updatedAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
  if (c.language) doc.summaryMap = { [c.language]: c.description };
  else doc.summary = c.description;
  if (p.tag) doc.topic = { type: "Hashtag", href: tagUrl(cfg, p.tag.name), name: `#${p.tag.display_name}` };
  doc.orderedItems = p.items.map((i) => featuredItemObject(cfg, c.id, i));
  return doc;
}

export const featuredCollectionDoc = (cfg: Config, p: CollectionDocParts): Obj => ({ "@context": COLLECTION_CONTEXT, ...featuredCollectionObject(cfg, p) });

/** FeatureAuthorizationSerializer: the local account (interactionTarget) consents to the collection (interactingObject). */
export const featureAuthorizationDoc = (actorUri: string, itemId: string, collectionUri: string): Obj => ({
  "@context": COLLECTION_CONTEXT,
  ...featureAuthorizationObject(actorUri, itemId, collectionUri),
});

const featureAuthorizationObject = (actorUri: string, itemId: string, collectionUri: string): Obj => ({
  id: featureAuthorizationUri(actorUri, itemId),
  type: "FeatureAuthorization",
  interactionTarget: actorUri,
  interactingObject: collectionUri,
});

/** AddFeaturedCollectionSerializer / UpdateFeaturedCollectionSerializer. */
export const addCollectionActivity = (cfg: Config, p: CollectionDocParts): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${collectionUri(cfg, p.collection.id)}#add`,
  type: "Add",
  actor: p.owner.uri,
  to: [PUBLIC],
  target: featuredCollectionsUri(p.owner.uri),
  object: featuredCollectionObject(cfg, p),
});

export const updateCollectionActivity = (cfg: Config, p: CollectionDocParts): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${collectionUri(cfg, p.collection.id)}#updates/${Math.floor(p.collection.updatedAt / 1000)}`,
  type: "Update",
  actor: p.owner.uri,
  to: [PUBLIC],
  object: featuredCollectionObject(cfg, p),
});

/** RemoveFeaturedCollectionSerializer: the collection taken off the owner's featured collections (deleted). */
export const removeCollectionActivity = (cfg: Config, ownerUri: string, collectionId: string): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${collectionUri(cfg, collectionId)}#remove`,
  type: "Remove",
  actor: ownerUri,
  to: [PUBLIC],
  target: featuredCollectionsUri(ownerUri),
  object: collectionUri(cfg, collectionId),
});

/** AddFeaturedItemSerializer / RemoveFeaturedItemSerializer. */
export const addItemActivity = (cfg: Config, p: CollectionDocParts, i: CollectionDocItem): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${collectionItemUri(cfg, p.collection.id, i.id)}#add`,
  type: "Add",
  actor: p.owner.uri,
  to: [PUBLIC],
  target: collectionUri(cfg, p.collection.id),
  object: featuredItemObject(cfg, p.collection.id, i),
});

export const removeItemActivity = (cfg: Config, ownerUri: string, collectionId: string, itemId: string): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${collectionItemUri(cfg, collectionId, itemId)}#remove`,
  type: "Remove",
  actor: ownerUri,
  to: [PUBLIC],
  target: collectionUri(cfg, collectionId),
  object: collectionItemUri(cfg, collectionId, itemId),
});

/** FeatureRequestSerializer: the curator asks the account (object) to be featured in the collection (instrument). */
export const featureRequestActivity = (activityUri: string, actorUri: string, accountUri: string, collection: string): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: activityUri,
  type: "FeatureRequest",
  actor: actorUri,
  to: [accountUri],
  object: accountUri,
  instrument: collection,
});

/** AcceptFeatureRequestSerializer (with the FeatureAuthorization as `result`) and RejectFeatureRequestSerializer. */
export function featureAnswerActivity(actorUri: string, curatorUri: string, requestUri: string, itemId: string | null): Obj {
  if (!itemId) {
    return {
      "@context": COLLECTION_CONTEXT,
      id: `${actorUri}#rejects/feature_requests/${encodeURIComponent(requestUri)}`,
      type: "Reject",
      actor: actorUri,
      to: curatorUri,
      object: requestUri,
    };
  }
  return {
    "@context": COLLECTION_CONTEXT,
    id: `${actorUri}#accepts/feature_requests/${itemId}`,
    type: "Accept",
    actor: actorUri,
    to: curatorUri,
    object: requestUri,
    result: featureAuthorizationUri(actorUri, itemId),
  };
}

/** DeleteFeatureAuthorizationSerializer: a local account withdraws its consent. */
export const deleteFeatureAuthorizationActivity = (actorUri: string, itemId: string, collection: string): Obj => ({
  "@context": COLLECTION_CONTEXT,
  id: `${featureAuthorizationUri(actorUri, itemId)}#delete`,
  type: "Delete",
  actor: actorUri,
  to: [PUBLIC],
  object: featureAuthorizationObject(actorUri, itemId, collection),
});
