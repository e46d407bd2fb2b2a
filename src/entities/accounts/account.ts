// Account rows → Mastodon Account JSON. Counts live on the row, so rendering needs no query.
import type { Config } from "../../env";
import { absoluteProfileLinks, escapeHtml, profileLinks, renderPlainText } from "../../lib/text/text";
import type { AccountRow, RenderAccountRow, RoleRow, UserRow, Visibility } from "../../db/schema/index";
import { accountUrl, DEFAULT_AVATAR, DEFAULT_HEADER, isoTime, mediaUrl } from "../urls";
import { httpUrl } from "../../lib/http/urls";
import { type FeatureDecision, type MastodonFeatureApproval, renderFeatureApproval } from "../../policy/feature";
import { renderEmojis, type MastodonCustomEmoji } from "../instance/custom-emoji";

/** A profile field (Account `fields`); `verified_at` is set when the link was found to point back to the profile. */
export interface MastodonAccountField {
  name: string;
  value: string;
  verified_at: string | null;
}

/** Role (docs.joinmastodon.org/entities/Role): ids and permissions are strings of integers, as Mastodon casts them. */
export interface MastodonRole {
  id: string;
  name: string;
  permissions: string;
  color: string;
  highlighted: boolean;
  /** Mastodon 4.6: collections a user of the role may curate (the same for every role here). */
  collection_limit: number;
}

/** Collections one account may curate (Mastodon reads it from the user's role, `collection_limit`). */
export const COLLECTION_LIMIT = 10;

/** Account (docs.joinmastodon.org/entities/Account). */
export interface MastodonAccount {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  locked: boolean;
  bot: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  group: boolean;
  created_at: string;
  note: string;
  url: string;
  uri: string;
  avatar: string;
  avatar_static: string;
  header: string;
  header_static: string;
  followers_count: number;
  following_count: number;
  statuses_count: number;
  last_status_at: string | null;
  hide_collections: boolean | null;
  noindex: boolean;
  /** Mastodon 4.6: who may feature the account in a collection; `current_user` as it holds for anybody (no relationship read). */
  feature_approval: MastodonFeatureApproval;
  emojis: MastodonCustomEmoji[];
  roles: Pick<MastodonRole, "id" | "name" | "color">[];
  fields: MastodonAccountField[];
  suspended?: true;
  limited?: true;
  memorial?: true;
  moved?: MastodonAccount;
}

/** CredentialAccount `source`: the profile as its owner wrote it, and the owner's posting defaults. */
export interface MastodonAccountSource {
  privacy: Visibility;
  sensitive: boolean;
  language: string;
  note: string;
  fields: MastodonAccountField[];
  follow_requests_count: number;
  hide_collections: boolean | null;
  discoverable: boolean | null;
  indexable: boolean;
  attribution_domains: string[];
  quote_policy: "public" | "followers" | "nobody";
}

/** CredentialAccount: the own account with `source` and `role`. */
export interface MastodonCredentialAccount extends MastodonAccount {
  source: MastodonAccountSource;
  role: MastodonRole;
}

export function acctOf(a: Pick<AccountRow, "username" | "domain">): string {
  return a.domain ? `${a.username}@${a.domain}` : a.username;
}

function midnight(ms: number): string {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toISOString();
}

function picture(cfg: Config, key: string | null, remote: string | null, fallback: string): string {
  if (key) return mediaUrl(cfg, key);
  if (remote) return remote;
  return `${cfg.origin}${fallback}`;
}

/**
 * `moved`: the account `a` moved to (a.movedToAccountId), when the caller loaded it (services/accounts/account-migration.ts
 * movedAccountOf); rendered as Mastodon's `moved`, itself without a `moved` (Mastodon's moved_and_not_nested?).
 * `currentUser`: the viewer's feature decision where the caller read it (src/services/relationships/feature-approval.ts);
 * without it, `feature_approval.current_user` is what holds for anybody signed in.
 */
export function renderAccount(
  cfg: Config,
  a: RenderAccountRow,
  role?: RoleRow | null,
  moved?: RenderAccountRow | null,
  currentUser?: FeatureDecision,
): MastodonAccount {
  const local = !a.domain;
  const suspended = !!a.suspendedAt;
  // A domain blocked with reject_media (accounts.reject_media): Mastodon never downloads its avatars, headers or emojis.
  const noFiles = suspended || !!a.rejectMedia;
  const fields = local
    ? a.fields.map((f) => ({
        name: escapeHtml(f.name),
        value: renderPlainText(f.value, profileLinks(cfg.origin)).replace(/^<p>|<\/p>$/g, ""),
        verified_at: f.verified_at,
      }))
    : a.fields;
  const out: MastodonAccount = {
    id: a.id,
    username: a.username,
    acct: acctOf(a),
    display_name: suspended ? "" : a.displayName,
    locked: a.locked,
    bot: a.actorType === "Service" || a.actorType === "Application",
    discoverable: a.discoverable ?? null,
    indexable: a.indexable,
    group: a.actorType === "Group",
    created_at: midnight(a.createdAt),
    note: suspended ? "" : local ? absoluteProfileLinks(a.note, cfg.origin) : a.note,
    // Rows stored before remote URLs were checked may hold another scheme: such a url is never shown.
    url: httpUrl(a.url) ?? (local ? accountUrl(cfg, a.username) : a.uri),
    uri: a.uri,
    avatar: noFiles ? `${cfg.origin}${DEFAULT_AVATAR}` : picture(cfg, a.avatarKey, a.avatarRemoteUrl, DEFAULT_AVATAR),
    avatar_static: "",
    header: noFiles ? `${cfg.origin}${DEFAULT_HEADER}` : picture(cfg, a.headerKey, a.headerRemoteUrl, DEFAULT_HEADER),
    header_static: "",
    followers_count: suspended ? 0 : a.followersCount,
    following_count: suspended ? 0 : a.followingCount,
    statuses_count: suspended ? 0 : a.statusesCount,
    last_status_at: a.lastStatusAt ? new Date(a.lastStatusAt).toISOString().slice(0, 10) : null,
    hide_collections: a.hideCollections ?? null,
    noindex: !a.indexable,
    feature_approval: renderFeatureApproval(a, currentUser),
    // Resolved when the profile was written (accounts.emojis): no query here.
    emojis: noFiles ? [] : renderEmojis(cfg, a.emojis),
    roles: role?.highlighted ? [{ id: role.id, name: role.name, color: role.color }] : [],
    fields: suspended ? [] : fields,
  };
  out.avatar_static = out.avatar;
  out.header_static = out.header;
  if (suspended) out.suspended = true;
  if (a.silencedAt) out.limited = true;
  if (a.memorial) out.memorial = true;
  if (moved && a.movedToAccountId === moved.id && !suspended) out.moved = renderAccount(cfg, moved);
  return out;
}

export function renderRole(role: RoleRow | null): MastodonRole {
  if (!role) return { id: "-99", name: "", permissions: "0", color: "", highlighted: false, collection_limit: COLLECTION_LIMIT };
  return {
    id: role.id,
    name: role.name,
    permissions: String(role.permissions),
    color: role.color,
    highlighted: role.highlighted,
    collection_limit: COLLECTION_LIMIT,
  };
}

/** CredentialAccount: the own account with `source` and `role` (verify_credentials, update_credentials). */
export function renderCredentialAccount(
  cfg: Config,
  a: AccountRow,
  user: UserRow,
  role: RoleRow | null,
  followRequestsCount: number,
): MastodonCredentialAccount {
  const s = user.settings ?? {};
  return {
    ...renderAccount(cfg, a, role),
    source: {
      privacy: s["posting:default:visibility"] ?? "public",
      sensitive: s["posting:default:sensitive"] ?? false,
      language: s["posting:default:language"] ?? "",
      note: a.noteSource,
      fields: a.fields.map((f) => ({ name: f.name, value: f.value, verified_at: f.verified_at })),
      follow_requests_count: followRequestsCount,
      hide_collections: a.hideCollections ?? null,
      discoverable: a.discoverable ?? null,
      indexable: a.indexable,
      attribution_domains: [],
      quote_policy: "public",
    },
    role: renderRole(role),
  };
}

export { isoTime };
