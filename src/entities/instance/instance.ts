// Instance documents (v2 and legacy v1), their configuration block and rules. Clients decode these strictly at
// start-up (Ice Cubes, Elk), so every field in docs/…/mastodon-clients.md "Instance v2 fields" is always present.
import { SUPPORTED_MIME_TYPES } from "../../lib/http/media-types";
import type { Config, Env } from "../../env";
import { SOFTWARE_VERSION, TERN_VERSION } from "../../env";
import { sha256Hex } from "../../lib/security/crypto";
import { SETTING, registrationsMode, type Settings } from "../../queries/instance/instance-settings";
import { renderAccount, type MastodonAccount } from "../accounts/account";
import { DEFAULT_HEADER, mediaUrl, streamingOrigin } from "../urls";
import type { AccountRow, DomainBlockRow, RoleRow, RuleRow } from "../../db/schema/index";

/** What the instance documents are rendered from (services/instance/instance.ts loads it, one snapshot per isolate). */
export interface InstanceData {
  settings: Settings;
  rules: RuleRow[];
  contact: { account: AccountRow; role: RoleRow | null } | null;
  activeMonth: number;
  /** The VAPID public key push subscriptions are made with ("" only when it could not be made: no env given). */
  vapidPublicKey: string;
}

export interface InstanceV1Data extends InstanceData {
  userCount: number;
  statusCount: number;
  domainCount: number;
}

/**
 * Mastodon's version with Tern as semver build metadata: clients (Phanpy, Elk) gate features on the semver of
 * `version`, and build metadata never changes precedence, so 4.6.0+tern.0.1.0 satisfies ">=4.6".
 */
export const INSTANCE_VERSION = `${SOFTWARE_VERSION}+tern.${TERN_VERSION}`;

// Mastodon's API version gates client features: Phanpy uses grouped notifications (/api/v2/notifications) from 2 on,
// quote posts from 7 (docs.joinmastodon.org/client/quotes: "available starting with mastodon API version 7"; Mastodon
// 4.5 serves 7). Streaming is not gated on it: Phanpy, Elk (masto.js createStreamingAPIClient) and Ice Cubes open the
// WebSocket whenever configuration.urls.streaming (v2) or urls.streaming_api (v1) is present. Mastodon 4.6 serves 10:
// annual reports' state and generate, the Profile endpoints and collections, which apps offer from 10 on; Tern serves
// them (collections without federation: README, Compatibility).
export const API_VERSION = 10;
export const LANGUAGES = ["en"];

export const LIMITS = {
  maxCharacters: 500,
  maxMediaAttachments: 4,
  charactersReservedPerUrl: 23,
  maxFeaturedTags: 10,
  maxPinnedStatuses: 5,
  pollMaxOptions: 4,
  pollMaxCharactersPerOption: 50,
  pollMinExpiration: 300,
  pollMaxExpiration: 2629746,
  descriptionLimit: 1500,
  imageSizeLimit: 16777216,
  imageMatrixLimit: 33177600,
  videoSizeLimit: 103809024,
  videoFrameRateLimit: 120,
  videoMatrixLimit: 8294400,
} as const;

/** Rule (docs.joinmastodon.org/entities/Rule); Tern keeps no translations. */
export interface MastodonRule {
  id: string;
  text: string;
  hint: string;
  translations: Record<string, { text: string; hint: string }>;
}

export function renderRule(r: RuleRow): MastodonRule {
  return { id: r.id, text: r.text, hint: r.hint, translations: {} };
}

/** The limits both instance documents give (`configuration`; v2 adds urls, vapid, translation and access). */
export interface MastodonInstanceBaseConfiguration {
  accounts: { max_featured_tags: number; max_pinned_statuses: number };
  statuses: { max_characters: number; max_media_attachments: number; characters_reserved_per_url: number };
  media_attachments: {
    supported_mime_types: string[];
    description_limit: number;
    image_size_limit: number;
    image_matrix_limit: number;
    video_size_limit: number;
    video_frame_rate_limit: number;
    video_matrix_limit: number;
  };
  polls: { max_options: number; max_characters_per_option: number; min_expiration: number; max_expiration: number };
}

type FeedAccess = "public" | "authenticated";

/** Instance (v2, docs.joinmastodon.org/entities/Instance). */
export interface MastodonInstance {
  domain: string;
  title: string;
  version: string;
  source_url: string;
  description: string;
  usage: { users: { active_month: number } };
  thumbnail: { url: string; blurhash: string | null; versions: { "@1x"?: string; "@2x"?: string } };
  icon: { src: string; size: string }[];
  languages: string[];
  configuration: MastodonInstanceBaseConfiguration & {
    urls: { streaming: string; status?: string };
    vapid: { public_key: string };
    translation: { enabled: boolean };
    timelines_access: Record<"live_feeds" | "hashtag_feeds" | "trending_link_feeds", { local: FeedAccess; remote: FeedAccess }>;
    limited_federation: boolean;
  };
  registrations: {
    enabled: boolean;
    approval_required: boolean;
    message: string | null;
    url: string | null;
    min_age: number | null;
    reason_required: boolean;
  };
  api_versions: { mastodon: number };
  contact: { email: string; account: MastodonAccount | null };
  rules: MastodonRule[];
}

/** V1::Instance (GET /api/v1/instance). */
export interface MastodonInstanceV1 {
  uri: string;
  title: string;
  short_description: string;
  description: string;
  email: string;
  version: string;
  urls: { streaming_api: string };
  stats: { user_count: number; status_count: number; domain_count: number };
  thumbnail: string;
  languages: string[];
  registrations: boolean;
  approval_required: boolean;
  invites_enabled: boolean;
  configuration: MastodonInstanceBaseConfiguration;
  contact_account: MastodonAccount | null;
  rules: MastodonRule[];
}

/** ExtendedDescription and PrivacyPolicy: a long text and when it changed (null: never written). */
export interface MastodonPolicyText {
  updated_at: string | null;
  content: string;
}

/** TermsOfService. */
export interface MastodonTermsOfService {
  effective_date: string;
  effective: boolean;
  content: string;
  succeeded_by: string | null;
}

/** A language offered for posting (GET /api/v1/instance/languages). */
export interface MastodonLanguage {
  code: string;
  name: string;
}

/** DomainBlock: a domain the instance blocks, as everyone may see it (obfuscated when asked). */
export interface MastodonDomainBlock {
  domain: string;
  digest: string;
  severity: "silence" | "suspend";
  comment: string;
}

const title = (cfg: Config, s: Settings) => s[SETTING.title] || cfg.title;
const shortDescription = (cfg: Config, s: Settings) => s[SETTING.shortDescription] || cfg.description;
const contactEmail = (cfg: Config, s: Settings) => s[SETTING.contactEmail] ?? cfg.contactEmail;
/** The thumbnail uploaded on the admin settings page, else the default header image. */
function thumbnailUrl(cfg: Config, s: Settings): string {
  const key = s[SETTING.thumbnail];
  return key ? mediaUrl(cfg, key) : `${cfg.origin}${DEFAULT_HEADER}`;
}

function baseConfiguration(): MastodonInstanceBaseConfiguration {
  return {
    accounts: { max_featured_tags: LIMITS.maxFeaturedTags, max_pinned_statuses: LIMITS.maxPinnedStatuses },
    statuses: {
      max_characters: LIMITS.maxCharacters,
      max_media_attachments: LIMITS.maxMediaAttachments,
      characters_reserved_per_url: LIMITS.charactersReservedPerUrl,
    },
    media_attachments: {
      supported_mime_types: [...SUPPORTED_MIME_TYPES],
      description_limit: LIMITS.descriptionLimit,
      image_size_limit: LIMITS.imageSizeLimit,
      image_matrix_limit: LIMITS.imageMatrixLimit,
      video_size_limit: LIMITS.videoSizeLimit,
      video_frame_rate_limit: LIMITS.videoFrameRateLimit,
      video_matrix_limit: LIMITS.videoMatrixLimit,
    },
    polls: {
      max_options: LIMITS.pollMaxOptions,
      max_characters_per_option: LIMITS.pollMaxCharactersPerOption,
      min_expiration: LIMITS.pollMinExpiration,
      max_expiration: LIMITS.pollMaxExpiration,
    },
  };
}

function timelinesAccess(cfg: Config): MastodonInstance["configuration"]["timelines_access"] {
  const v: FeedAccess = cfg.publicPreview ? "public" : "authenticated";
  const pair = { local: v, remote: v };
  return { live_feeds: pair, hashtag_feeds: pair, trending_link_feeds: pair };
}

export function renderInstanceV2(cfg: Config, env: Env, d: InstanceData): MastodonInstance {
  const s = d.settings;
  // Clients open the streaming WebSocket only when this is present (Elk, Phanpy; without it they poll).
  const urls: MastodonInstance["configuration"]["urls"] = { streaming: streamingOrigin(cfg.origin) };
  const statusPage = s[SETTING.statusPageUrl];
  if (statusPage) urls.status = statusPage;
  return {
    domain: cfg.domain,
    title: title(cfg, s),
    version: INSTANCE_VERSION,
    // Where to get the source (AGPL notice in Mastodon): SOURCE_URL when the operator sets it, else the instance itself.
    source_url: env.SOURCE_URL || `${cfg.origin}/`,
    description: shortDescription(cfg, s),
    usage: { users: { active_month: d.activeMonth } },
    thumbnail: { url: thumbnailUrl(cfg, s), blurhash: null, versions: {} },
    icon: [],
    languages: LANGUAGES,
    configuration: {
      urls,
      vapid: { public_key: d.vapidPublicKey },
      ...baseConfiguration(),
      translation: { enabled: false },
      timelines_access: timelinesAccess(cfg),
      limited_federation: false,
    },
    registrations: {
      enabled: registrationsMode(cfg, s) !== "closed",
      approval_required: registrationsMode(cfg, s) === "approval",
      message: s[SETTING.registrationsMessage] || null,
      url: null,
      min_age: null,
      reason_required: false,
    },
    api_versions: { mastodon: API_VERSION },
    contact: {
      email: contactEmail(cfg, s),
      account: d.contact ? renderAccount(cfg, d.contact.account, d.contact.role) : null,
    },
    rules: d.rules.map(renderRule),
  };
}

export function renderInstanceV1(cfg: Config, d: InstanceV1Data): MastodonInstanceV1 {
  const s = d.settings;
  return {
    uri: cfg.domain,
    title: title(cfg, s),
    short_description: shortDescription(cfg, s),
    description: s[SETTING.description] || shortDescription(cfg, s),
    email: contactEmail(cfg, s),
    version: INSTANCE_VERSION,
    urls: { streaming_api: streamingOrigin(cfg.origin) },
    stats: { user_count: d.userCount, status_count: d.statusCount, domain_count: d.domainCount },
    thumbnail: thumbnailUrl(cfg, s),
    languages: LANGUAGES,
    registrations: registrationsMode(cfg, s) !== "closed",
    approval_required: registrationsMode(cfg, s) === "approval",
    invites_enabled: false,
    configuration: baseConfiguration(),
    contact_account: d.contact ? renderAccount(cfg, d.contact.account, d.contact.role) : null,
    rules: d.rules.map(renderRule),
  };
}

const DEFAULT_PRIVACY_POLICY = `<h1>Privacy Policy</h1>
<p>This server stores what you give it to provide the service: your account (username, e-mail address, password hash),
your profile, the statuses and media you post, and your follows, favourites, bookmarks, blocks and mutes. Public and
unlisted statuses, your profile and your follows are published to other servers you interact with. Followers-only and
direct statuses are delivered only to their recipients' servers. Sign-in IP addresses are kept for security.</p>
<p>You can delete your statuses and your account at any time. Contact the administrator at {email} with questions.</p>`;

/** The updated_at of a long text: its `<key>_updated_at` setting in ms, else null. */
function settingTime(s: Settings, key: string): string | null {
  const ms = Number(s[`${key}_updated_at`]);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}

/**
 * extended_description and privacy_policy: {updated_at, content}. The privacy policy has a default text, like
 * Mastodon's; `cfg` is given only for texts with one.
 */
export function renderPolicyText(s: Settings, key: string, cfg: Config | null): MastodonPolicyText {
  const custom = s[key];
  if (custom) return { updated_at: settingTime(s, key) ?? new Date(0).toISOString(), content: custom };
  if (!cfg) return { updated_at: null, content: "" };
  const email = escapeAttr(contactEmail(cfg, s) || "the address in the server information");
  return { updated_at: "2025-01-01T00:00:00.000Z", content: DEFAULT_PRIVACY_POLICY.replace("{email}", email) };
}

/** Terms of service, or null when none were written (Mastodon answers 404 then). */
export function renderTerms(s: Settings): MastodonTermsOfService | null {
  const content = s[SETTING.termsOfService];
  if (!content) return null;
  const at = settingTime(s, SETTING.termsOfService) ?? new Date(0).toISOString();
  return { effective_date: at.slice(0, 10), effective: true, content, succeeded_by: null };
}

function escapeAttr(s: string) {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** ISO 639-1 codes offered for posting (the list Mastodon ships, minus rarely used historical ones). */
const LANGUAGE_CODES =
  "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu".split(
    " ",
  );

let languagesCache: MastodonLanguage[] | null = null;

export function renderLanguages(): MastodonLanguage[] {
  if (languagesCache) return languagesCache;
  let names: Intl.DisplayNames | null = null;
  try {
    names = new Intl.DisplayNames(["en"], { type: "language" });
  } catch {}
  languagesCache = LANGUAGE_CODES.map((code) => {
    let name = code;
    try {
      name = names?.of(code) ?? code;
    } catch {}
    return { code, name };
  });
  return languagesCache;
}

/** Mastodon's public_domain: the middle of an obfuscated domain is starred out (dots kept). */
export function obfuscateDomain(domain: string): string {
  const n = domain.length;
  const visible = Math.floor(n / 4);
  return Array.from(domain, (ch, i) => (i > visible && i < n - visible && ch !== "." ? "*" : ch)).join("");
}

export async function renderDomainBlock(b: DomainBlockRow): Promise<MastodonDomainBlock> {
  return {
    domain: b.obfuscate ? obfuscateDomain(b.domain) : b.domain,
    digest: await sha256Hex(b.domain),
    severity: b.severity === "suspend" ? "suspend" : "silence",
    comment: b.publicComment ?? "",
  };
}
