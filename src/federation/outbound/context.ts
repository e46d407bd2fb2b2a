// JSON-LD contexts Tern emits. Documents are plain JSON (no JSON-LD processing on either side: see docs/architecture.md).
export const AS = "https://www.w3.org/ns/activitystreams";
export const SECURITY = "https://w3id.org/security/v1";

export const ACTOR_CONTEXT = [
  AS,
  SECURITY,
  {
    manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
    alsoKnownAs: { "@id": "as:alsoKnownAs", "@type": "@id" },
    movedTo: { "@id": "as:movedTo", "@type": "@id" },
    toot: "http://joinmastodon.org/ns#",
    featured: { "@id": "toot:featured", "@type": "@id" },
    featuredTags: { "@id": "toot:featuredTags", "@type": "@id" },
    discoverable: "toot:discoverable",
    indexable: "toot:indexable",
    memorial: "toot:memorial",
    suspended: "toot:suspended",
    schema: "http://schema.org#",
    PropertyValue: "schema:PropertyValue",
    value: "schema:value",
    Emoji: "toot:Emoji",
    // FEP-7aa9 (Mastodon 4.6's collections): the actor's collections of accounts, and who may feature it.
    featuredCollections: { "@id": "https://w3id.org/fep/7aa9#featuredCollections", "@type": "@id" },
    gts: "https://gotosocial.org/ns#",
    interactionPolicy: { "@id": "gts:interactionPolicy", "@type": "@id" },
    canFeature: { "@id": "https://w3id.org/fep/7aa9#canFeature", "@type": "@id" },
    automaticApproval: { "@id": "gts:automaticApproval", "@type": "@id" },
    manualApproval: { "@id": "gts:manualApproval", "@type": "@id" },
  },
];

export const NOTE_CONTEXT = [
  AS,
  {
    ostatus: "http://ostatus.org#",
    atomUri: "ostatus:atomUri",
    inReplyToAtomUri: "ostatus:inReplyToAtomUri",
    conversation: "ostatus:conversation",
    sensitive: "as:sensitive",
    toot: "http://joinmastodon.org/ns#",
    votersCount: "toot:votersCount",
    blurhash: "toot:blurhash",
    focalPoint: { "@container": "@list", "@id": "toot:focalPoint" },
    Hashtag: "as:Hashtag",
    Emoji: "toot:Emoji",
    // Quote posts (FEP-044f, Mastodon 4.5's quotes and interaction_policies context extensions)
    quote: { "@id": "https://w3id.org/fep/044f#quote", "@type": "@id" },
    quoteUri: "http://fedibird.com/ns#quoteUri",
    _misskey_quote: "https://misskey-hub.net/ns#_misskey_quote",
    quoteAuthorization: { "@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id" },
    gts: "https://gotosocial.org/ns#",
    interactionPolicy: { "@id": "gts:interactionPolicy", "@type": "@id" },
    canQuote: { "@id": "gts:canQuote", "@type": "@id" },
    automaticApproval: { "@id": "gts:automaticApproval", "@type": "@id" },
  },
];

/** QuoteRequest, QuoteAuthorization and their Accept/Reject/Delete (Mastodon's quote_requests/quote_authorizations). */
export const QUOTE_CONTEXT = [
  AS,
  {
    QuoteRequest: "https://w3id.org/fep/044f#QuoteRequest",
    QuoteAuthorization: "https://w3id.org/fep/044f#QuoteAuthorization",
    gts: "https://gotosocial.org/ns#",
    interactingObject: { "@id": "gts:interactingObject", "@type": "@id" },
    interactionTarget: { "@id": "gts:interactionTarget", "@type": "@id" },
  },
];

/** FeaturedCollection, FeaturedItem, FeatureRequest, FeatureAuthorization (FEP-7aa9, Mastodon 4.6's context extensions). */
export const COLLECTION_CONTEXT = [
  AS,
  {
    toot: "http://joinmastodon.org/ns#",
    discoverable: "toot:discoverable",
    sensitive: "as:sensitive",
    Hashtag: "as:Hashtag",
    FeaturedCollection: "https://w3id.org/fep/7aa9#FeaturedCollection",
    FeaturedItem: "https://w3id.org/fep/7aa9#FeaturedItem",
    FeatureRequest: "https://w3id.org/fep/7aa9#FeatureRequest",
    FeatureAuthorization: "https://w3id.org/fep/7aa9#FeatureAuthorization",
    topic: { "@id": "https://w3id.org/fep/7aa9#topic", "@type": "@id" },
    featuredObject: { "@id": "https://w3id.org/fep/7aa9#featuredObject", "@type": "@id" },
    featuredObjectType: { "@id": "https://w3id.org/fep/7aa9#featuredObjectType", "@type": "@vocab" },
    featureAuthorization: { "@id": "https://w3id.org/fep/7aa9#featureAuthorization", "@type": "@id" },
    gts: "https://gotosocial.org/ns#",
    interactingObject: { "@id": "gts:interactingObject", "@type": "@id" },
    interactionTarget: { "@id": "gts:interactionTarget", "@type": "@id" },
  },
];

export const AP_CONTENT_TYPE = "application/activity+json; charset=utf-8";

/** Does an Accept header ask for ActivityPub JSON (content negotiation on shared URLs)? */
export function wantsActivityJson(accept: string | undefined | null): boolean {
  if (!accept) return false;
  const a = accept.toLowerCase();
  return a.includes("application/activity+json") || (a.includes("application/ld+json") && a.includes("activitystreams")) || a.includes("application/ld+json");
}
