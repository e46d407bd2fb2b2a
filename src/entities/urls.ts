// Public URLs of local things. One place, so ActivityPub ids and REST urls never disagree.
import type { Config } from "../env";
import { parseId } from "../lib/text/ids";

export const accountUri = (cfg: Config, username: string) => `${cfg.origin}/users/${username}`;
export const accountUrl = (cfg: Config, username: string) => `${cfg.origin}/@${username}`;
export const statusUri = (cfg: Config, username: string, id: string) => `${cfg.origin}/users/${username}/statuses/${id}`;
export const statusUrl = (cfg: Config, username: string, id: string) => `${cfg.origin}/@${username}/${id}`;

/** The local status a URL names, the other way round: its page (statusUrl) or its id (statusUri), on this host. */
export function localStatusOfUrl(cfg: Pick<Config, "domain">, url: string): { username: string; id: string } | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.host.toLowerCase() !== cfg.domain.toLowerCase()) return null;
  const m = /^\/(?:@([A-Za-z0-9_]{1,30})|users\/([A-Za-z0-9_]{1,30})\/statuses)\/(\d{1,19})\/?$/.exec(u.pathname);
  const id = m ? parseId(m[3]) : null;
  return m && id ? { username: (m[1] ?? m[2]) as string, id } : null;
}
/** A local collection's id URI: its FeaturedCollection is served there (src/federation/http/collections.ts). */
export const collectionUri = (cfg: Pick<Config, "origin">, id: string) => `${cfg.origin}/collections/${id}`;
/** An item of a local collection: its FeaturedItem's id. */
export const collectionItemUri = (cfg: Pick<Config, "origin">, collectionId: string, itemId: string) =>
  `${cfg.origin}/collections/${collectionId}/items/${itemId}`;
/** A local account's consent to be featured by an item (its FeatureAuthorization), beneath its actor. */
export const featureAuthorizationUri = (actorUri: string, itemId: string) => `${actorUri}/feature_authorizations/${itemId}`;
/** A local account's collections (the actor's `featuredCollections`). */
export const featuredCollectionsUri = (actorUri: string) => `${actorUri}/featured_collections`;
export const tagUrl = (cfg: Config, name: string) => `${cfg.origin}/tags/${encodeURIComponent(name)}`;
export const mediaUrl = (cfg: Pick<Config, "origin">, key: string) => `${cfg.origin}/media/${key}`;
export const DEFAULT_AVATAR = "/avatars/original/missing.png";
export const DEFAULT_HEADER = "/headers/original/missing.png";

/** A time in ms as ISO 8601; a time that is always set gives a string, a missing one null. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null | undefined): string | null;
export function isoTime(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}

/** The `streaming` URL clients connect to: this origin with the WebSocket scheme (Mastodon gives wss://host). */
export function streamingOrigin(origin: string): string {
  return origin.replace(/^http(s?):/i, (_m, s: string) => `ws${s}:`);
}
