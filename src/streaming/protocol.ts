// What travels between the Worker, the router object and the hub objects of the STREAMING namespace. Everything here
// is plain data (structured-cloned by Durable Object RPC); ids are decimal strings.
import type { Config } from "../env";
import type { Sub } from "./streams";

/** Name of the one router object (which hubs have connections, and who listens to which shared stream). */
export const ROUTER = "router";
/** Sockets of signed-out clients are spread over this many hubs at random (they only read shared streams). */
export const ANON_SHARDS = 8;

/** The value of `key` in `map`, made and stored first when missing. */
export function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

export const userHub = (accountId: string) => `user:${accountId}`;
export const anonHub = (n: number) => `anon:${n}`;
/**
 * The `anon` hub of a signed-out client's IP (or /64): one IP's sockets share one hub, where its share of the
 * connections and of the subscription changes is counted (hub.ts). FNV-1a, so every isolate picks the same hub.
 */
export function anonHubFor(ip: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < ip.length; i++) h = Math.imul(h ^ ip.charCodeAt(i), 0x01000193);
  return anonHub((h >>> 0) % ANON_SHARDS);
}
export const accountOfHub = (hub: string): string | null => (hub.startsWith("user:") ? hub.slice(5) : null);

/** Who a connection is, as the Worker established it before handing the connection to a hub. */
export interface Session {
  hub: string;
  /** Account of a functional user, else null (signed out, or an app token). */
  acct: string | null;
  /** Access token id, re-checked by the hub (revocation, suspension, disabled login). */
  tok: string | null;
  /** Read scopes as bits (streams.ts scopeBits). */
  sc: number;
  /**
   * The client's IP (IPv6 by /64) for a signed-out connection, whose share of the hub is counted by it; absent for
   * signed-in ones (counted by account) and for the rate-limit safelist.
   */
  ip?: string;
}

/** A connection's state, kept as the WebSocket's serialised attachment so it survives hibernation (≤ 2 KB). */
export interface Conn extends Session {
  subs: Sub[];
}

/** Filtering facts of a status on shared streams (blocks, mutes, domain blocks, language, content filters). */
export interface StatusMeta {
  statusId: string;
  authorId: string;
  /** null for local authors. */
  authorDomain: string | null;
  /** Mentioned accounts (Mastodon drops statuses mentioning someone the viewer blocks or mutes). */
  mentionIds: string[];
  /** The author of the status it quotes, when the signed-out rendering shows that status (its state per viewer). */
  quote?: { authorId: string; authorDomain: string | null };
  language: string | null;
  /** What content filters match against (filter-match.ts searchableText). */
  filterText: string;
}

/**
 * A status rendered once for the account streams (user, list, direct) of every viewer the fan-out reached, as Mastodon's
 * StatusCacheHydrator renders it once without a viewer: the viewer's own fields are added by each hub (hub.ts,
 * viewer-state.ts accountPayloadFor) from the viewer's facts (`ViewerFacts`, read by the publisher in one statement
 * for all of them) and its cached state (blocks, filters). Absent when the status quotes one (the quote's state and
 * visibility are the viewer's own): each hub renders it for its account then, as it does for the authors' own hubs.
 */
export interface AccountPart {
  /** Rendered without a viewer and without the visibility check (the fan-out chose the feeds): no viewer fields. */
  payload: string;
  /** A direct status (the `direct` stream's rule). */
  direct: boolean;
  /** The author and, for a boost, the boosted status's author: their hubs render it themselves (own fields). */
  authors: string[];
  /** What content filters match against: the boosted status's text for a boost (filter-match.ts searchableText). */
  filterText: string;
  /** The ids status filters match: the status and the one it boosts. */
  filterIds: string[];
  /** `quote_approval.current_user` for a viewer following the boosted (or the) status's author, and for one who does not. */
  quoteApproval: [string, string];
  /**
   * For a private or direct status (or boosted status), who may see it besides its author, as REST's visibility check
   * says: each rule must pass, by being mentioned in it or, when `followers`, following the author (ViewerFacts
   * `follows`). Fan-out only fills the feeds of those, but an edit reaches every feed still holding the status.
   */
  restricted?: { mentioned: string[]; followers: boolean }[];
}

/** What one viewer has done with a status (its boosted status for a boost), as REST renders it; absent fields are false. */
export interface ViewerFacts {
  favourited?: true;
  reblogged?: true;
  bookmarked?: true;
  /** Its conversation is muted. */
  muted?: true;
  /** The viewer's choices in its poll. */
  votes?: number[];
  /** The viewer follows its author (quote approval by followers; a private status's visibility). */
  follows?: true;
  /** Its author (or the boosted status's) blocks the viewer: REST does not show it. */
  blockedBy?: true;
  /** The viewer has active content filters (the hub matches them: its cached viewer state). */
  filters?: true;
}

/**
 * One event as the router hands it to hubs.
 * - `status`: update/status.update. Account streams (user, list, direct) get the status rendered for their viewer by
 *   the hub (REST's rules: visibility, filters with their context, the viewer's flags); shared streams get `payload`,
 *   the status rendered once for a signed-out viewer, filtered per viewer with `meta`.
 * - `raw`: delivered as is (delete, notification, conversation, announcement..., filters_changed).
 * - `relations`: not sent to clients; the hub forgets its cached blocks, mutes and domain blocks.
 */
export type Envelope =
  | { kind: "status"; event: "update" | "status.update"; statusId: string; cfg: Config; payload?: string; meta?: StatusMeta; account?: AccountPart }
  | { kind: "raw"; event: string; payload?: string }
  | { kind: "relations" };

/**
 * An envelope and where it goes: account streams of some accounts (delivered to the account's hub if it has
 * connections, whatever they subscribe to: the hub matches its sockets), shared stream keys, or every signed-in user.
 */
export interface Routed {
  envelope: Envelope;
  /** `facts`: the account's relations to a status event's status (absent: none; AccountPart). */
  accounts?: { id: string; keys: string[]; facts?: ViewerFacts }[];
  shared?: string[];
  /** Keys to deliver on for every connected account (announcements). */
  allUsers?: string[];
  /**
   * A status event that may belong on shared streams nobody listened to when it was planned: the router keeps it a
   * few seconds for a hub whose subscription to one of them was received before the router heard of it (router.ts).
   */
  recheck?: boolean;
}

/**
 * What a hub receives: envelopes in order, each with the hub's keys it is for. A status envelope without a payload on
 * shared keys is one the hub missed while its subscription travelled to the router: the hub renders it for those keys
 * it belongs on.
 */
export interface HubItem {
  envelope: Envelope;
  keys: string[];
  /** The hub's account's facts for a status event with an AccountPart (absent: none of them). */
  facts?: ViewerFacts;
}

/** Who listens, as of `version` (the router's; a publish planned from an older one is refused: router.ts). */
export interface Listening {
  version: string;
  /** Every account with connections. */
  online: string[];
  /** Shared stream keys with at least one subscriber. */
  shared: string[];
  /** Whether any hub has connections (a socket with no subscription yet may subscribe at any moment). */
  connected: boolean;
}
