// Local account → ActivityPub actor document (Person, or Service for bot accounts), as Mastodon shapes it.
import type { Config } from "../../env";
import { absoluteProfileLinks, escapeHtml, profileHashtags, profileLinks, renderPlainText } from "../../lib/text/text";
import type { AccountRow } from "../../db/schema/index";
import { DEFAULT_AVATAR, DEFAULT_HEADER, featuredCollectionsUri, mediaUrl, tagUrl } from "../../entities/urls";
import { ACTOR_CONTEXT } from "./context";
import { emojiTags } from "./emoji-tags";

function image(cfg: Config, key: string | null, fallback: string | null) {
  if (key) return { type: "Image", mediaType: guessType(key), url: mediaUrl(cfg, key) };
  if (fallback) return { type: "Image", mediaType: "image/png", url: `${cfg.origin}${fallback}` };
  return undefined;
}

function guessType(key: string): string {
  const ext = key.split(".").pop()?.toLowerCase();
  return ext === "jpg" || ext === "jpeg" ? "image/jpeg" : ext === "gif" ? "image/gif" : ext === "webp" ? "image/webp" : "image/png";
}

/** `movedToUri`: the actor id of the account this one moved to (accounts.moved_to_account_id), when it moved. */
export function renderActor(cfg: Config, a: AccountRow, publicKeyPem: string, movedToUri?: string | null): Record<string, unknown> {
  const fields = a.fields.map((f) => ({
    type: "PropertyValue",
    name: f.name,
    value: renderPlainText(f.value, profileLinks(cfg.origin)).replace(/^<p>|<\/p>$/g, ""),
  }));
  const doc: Record<string, unknown> = {
    "@context": ACTOR_CONTEXT,
    id: a.uri,
    type: a.actorType === "Service" || a.actorType === "Application" ? "Service" : a.actorType === "Group" ? "Group" : "Person",
    following: a.followingUrl,
    followers: a.followersUrl,
    inbox: a.inboxUrl,
    outbox: a.outboxUrl,
    featured: a.featuredUrl,
    featuredTags: a.featuredTagsUrl,
    featuredCollections: featuredCollectionsUri(a.uri),
    // Who may feature the account in a collection (Mastodon's ActorSerializer#interaction_policy): the actor alone when
    // it is not discoverable, its followers when it is locked, anybody otherwise.
    interactionPolicy: {
      canFeature: { automaticApproval: [!a.discoverable ? a.uri : a.locked ? a.followersUrl : "https://www.w3.org/ns/activitystreams#Public"] },
    },
    preferredUsername: a.username,
    name: escapeHtml(a.displayName),
    summary: absoluteProfileLinks(a.note, cfg.origin),
    url: a.url,
    manuallyApprovesFollowers: a.locked,
    discoverable: a.discoverable ?? false,
    indexable: a.indexable,
    published: `${new Date(a.createdAt).toISOString().slice(0, 10)}T00:00:00Z`,
    memorial: a.memorial,
    publicKey: { id: `${a.uri}#main-key`, owner: a.uri, publicKeyPem },
    // Mastodon's actor lists the profile's hashtags (note and fields) with its custom emojis.
    tag: [
      ...emojiTags(cfg, a.emojis),
      ...profileHashtags([a.noteSource, ...a.fields.map((f) => f.value)]).map((t) => ({ type: "Hashtag", href: tagUrl(cfg, t), name: `#${t}` })),
    ],
    attachment: fields,
    endpoints: { sharedInbox: `${cfg.origin}/inbox` },
    icon: image(cfg, a.avatarKey, DEFAULT_AVATAR),
    image: image(cfg, a.headerKey, a.headerKey ? null : DEFAULT_HEADER),
  };
  // Account migration: the other accounts (aliases) and where this one moved, as Mastodon's actor has them.
  if (a.alsoKnownAs?.length) doc.alsoKnownAs = a.alsoKnownAs;
  if (movedToUri) doc.movedTo = movedToUri;
  if (a.suspendedAt) {
    // As Mastodon serves a suspended actor: the key and endpoints stay (so others can verify its Update), nothing
    // personal, and it asks for nothing (not discoverable, not indexable, no follows).
    Object.assign(doc, {
      suspended: true,
      name: "",
      summary: "",
      attachment: [],
      tag: [],
      icon: undefined,
      image: undefined,
      discoverable: false,
      indexable: false,
      manuallyApprovesFollowers: true,
      interactionPolicy: { canFeature: { automaticApproval: [a.uri] } },
    });
  }
  return doc;
}
