// Bindings and typed configuration. Configuration is read per request from `env` (never at import time).

export interface Env {
  DB: D1Database;
  MEDIA: R2Bucket;
  /** Image processing for uploads (src/media/images.ts). Without it, images are stored as uploaded, with no preview. */
  IMAGES?: ImagesBinding;
  /** Milliseconds one Images binding call may take before the upload answers 503 (default 15000). */
  IMAGES_TIMEOUT_MS?: string;
  HOME_FEED: DurableObjectNamespace;
  STREAMING: DurableObjectNamespace;
  RATE_LIMITER: DurableObjectNamespace;
  /** Effects (src/effects/types.ts JobMessage), sent only by src/effects/send.ts and pending.ts, which type them. */
  JOBS: Queue<unknown>;
  DELIVERY: Queue<unknown>;
  REGISTRATIONS_MODE?: string;
  SITE_TITLE?: string;
  SITE_DESCRIPTION?: string;
  SITE_CONTACT_EMAIL?: string;
  PUBLIC_PREVIEW?: string;
  SHOW_PEERS?: string;
  SHOW_ACTIVITY?: string;
  LOCAL_DOMAIN?: string;
  ALLOW_LOOPBACK_FETCH?: string;
  SETUP_TOKEN?: string;
  SECRET_KEY_BASE?: string;
  VAPID_PUBLIC_KEY?: string;
  VAPID_PRIVATE_KEY?: string;
  REQUIRE_EMAIL_CONFIRMATION?: string;
  SOURCE_URL?: string;
  /** D1 rows an archive import may write per UTC day (src/services/data/import-archive-rounds.ts). */
  ARCHIVE_IMPORT_DAILY_ROWS?: string;
  /** Bytes of its collection files an archive import's split reads per round (src/services/data/import-archive-rounds.ts); empty: 1,000,000. */
  ARCHIVE_SPLIT_BYTES?: string;
  /** Rate limits (src/http/rate-limit.ts): `N` per Mastodon's period, `N/SECONDS`, or `off`; empty: Mastodon's figure. */
  RATE_LIMIT_API_PER_ACCOUNT?: string;
  RATE_LIMIT_API_PER_TOKEN?: string;
  RATE_LIMIT_API_PER_IP?: string;
  RATE_LIMIT_PAGING?: string;
  RATE_LIMIT_MEDIA?: string;
  RATE_LIMIT_DELETES?: string;
  RATE_LIMIT_STATUSES?: string;
  RATE_LIMIT_FOLLOWS?: string;
  RATE_LIMIT_REPORTS?: string;
  RATE_LIMIT_FAVOURITES?: string;
  /** Seconds between votes on a local poll and the Update{Question} with its counts (Mastodon: 180); one per wait. */
  POLL_UPDATE_DELAY_SECONDS?: string;
  /** "true" in development (scripts/dev.mjs) and the benchmark: Server-Timing also carries D1 statements, rows read and written. */
  DEV_SERVER_TIMING?: string;
  /** Seconds an isolate serves the instance documents from memory before checking D1 again (default 15; 0: every request). */
  INSTANCE_CACHE_SECONDS?: string;
  /** `queue`: what a request records to run after its response (an incoming activity) goes to the JOBS queue instead. */
  EFFECTS_AFTER_RESPONSE?: string;
  /** Milliseconds a JOBS send may take before its effects are kept in D1 instead (default 5,000; src/effects/send.ts). */
  QUEUE_SEND_TIMEOUT_MS?: string;
  /** Milliseconds a Web Push request may take (default 15,000; src/push/deliver.ts). */
  PUSH_TIMEOUT_MS?: string;
  /** Client IPs exempt from the general API budgets, comma-separated; empty: 127.0.0.1 and ::1; `none`: nobody. */
  RATE_LIMIT_SAFELIST?: string;
  /** General-budget hits an isolate counts before reporting them to the RateLimiter object (src/http/rate-limit.ts). */
  RATE_LIMIT_REPORT_EVERY?: string;
  /** `true`: limited federation (allowlist) mode, only domains in domain_allows federate (src/federation/remote/remote-accounts.ts). */
  LIMITED_FEDERATION?: string;
  /**
   * Cloudflare Email Service (wrangler.toml `[[send_email]]`): optional. Without it Tern sends no mail and every flow
   * says so (src/mail/).
   */
  EMAIL?: SendEmail;
  /** The sender address of Tern's mails (default `notifications@<LOCAL_DOMAIN>`); its domain must be onboarded to Email Service. */
  MAIL_FROM?: string;
  /** Milliseconds a `send()` to the mail binding may take before it counts as failed (default 15,000; src/mail/send.ts). */
  MAIL_TIMEOUT_MS?: string;
  /** `false`: no annual reports are offered in December (Mastodon's `wrapstodon` setting); default on. */
  WRAPSTODON?: string;
  /** "false": remote media is hot-linked, never fetched into R2 (issue 32 point 3). Default on. */
  REMOTE_MEDIA_CACHE?: string;
  /**
   * "true": a cached remote picture gets a preview, sizes and a blurhash made by the Images binding (two
   * transformations each; the free plan has 5,000 a month, which uploads need too). Default off: stored as sent,
   * measured from its header, with the sender's blurhash (src/media/remote.ts).
   */
  REMOTE_MEDIA_PREVIEWS?: string;
  /** Time for fetching one remote file, in ms (default 30 s for a picture, 120 s for video or audio). */
  REMOTE_MEDIA_TIMEOUT_MS?: string;
  /** Days a cached remote file nobody here interacted with is kept (Mastodon's media_cache_retention_period); default 7, 0 for ever. */
  MEDIA_CACHE_RETENTION_DAYS?: string;
}

export type RegistrationsMode = "open" | "approval" | "closed";

/**
 * The settings readConfig reads. A function takes from `env` what it uses (`Pick<Env, …>`), not the whole Env, which
 * holds the queue bindings only the senders touch: scripts/check-layers.mjs holds src/services/ to it.
 */
export type ConfigEnv = Pick<
  Env,
  | "LOCAL_DOMAIN"
  | "REGISTRATIONS_MODE"
  | "SITE_TITLE"
  | "SITE_DESCRIPTION"
  | "SITE_CONTACT_EMAIL"
  | "PUBLIC_PREVIEW"
  | "SHOW_PEERS"
  | "SHOW_ACTIVITY"
  | "ALLOW_LOOPBACK_FETCH"
  | "REQUIRE_EMAIL_CONFIRMATION"
  | "LIMITED_FEDERATION"
  | "WRAPSTODON"
  | "REMOTE_MEDIA_CACHE"
>;

export interface Config {
  domain: string; // host[:port] used in acct and URIs
  origin: string; // scheme://host[:port]
  title: string;
  description: string;
  contactEmail: string;
  registrations: RegistrationsMode;
  publicPreview: boolean;
  showPeers: boolean;
  showActivity: boolean;
  allowLoopbackFetch: boolean;
  requireEmailConfirmation: boolean;
  /** Limited federation mode: only allowed domains (domain_allows) federate. */
  limitedFederation: boolean;
  /** Annual reports (Wrapstodon) are offered from 10 to 31 December, UTC. */
  wrapstodon: boolean;
  /** Remote attachments, avatars, headers, emojis and card images are fetched into R2 and served from here. */
  cacheRemoteMedia: boolean;
}

const on = (v: string | undefined, def: boolean) => (v === undefined || v === "" ? def : /^(1|true|yes|on)$/i.test(v));

/**
 * The config for a request's origin. The last one made is kept (frozen, shared): every request and every delivery of
 * a pack asks it again with the same bindings and origin, and each answer would cost a URL (a runtime object) and a
 * new object.
 */
let lastConfig: { env: ConfigEnv; origin: string; config: Config } | null = null;

export function readConfig(env: ConfigEnv, requestUrl: string): Config {
  // Only the scheme and authority count (the host and protocol below): the key is that prefix.
  const origin = /^[^/?#]*\/\/[^/?#]*/.exec(requestUrl)?.[0] ?? requestUrl;
  if (lastConfig && lastConfig.env === env && lastConfig.origin === origin) return lastConfig.config;
  const config = Object.freeze(makeConfig(env, requestUrl));
  lastConfig = { env, origin, config };
  return config;
}

function makeConfig(env: ConfigEnv, requestUrl: string): Config {
  const u = new URL(requestUrl);
  const domain = env.LOCAL_DOMAIN?.trim() || u.host;
  const scheme = env.LOCAL_DOMAIN?.trim() ? "https:" : u.protocol;
  const mode = (env.REGISTRATIONS_MODE ?? "approval").toLowerCase();
  return {
    domain,
    origin: `${scheme}//${domain}`,
    title: env.SITE_TITLE || "Tern",
    description: env.SITE_DESCRIPTION || "A small federated microblogging server.",
    contactEmail: env.SITE_CONTACT_EMAIL || "",
    registrations: mode === "open" || mode === "closed" ? mode : "approval",
    publicPreview: on(env.PUBLIC_PREVIEW, true),
    showPeers: on(env.SHOW_PEERS, true),
    showActivity: on(env.SHOW_ACTIVITY, true),
    allowLoopbackFetch: on(env.ALLOW_LOOPBACK_FETCH, false),
    requireEmailConfirmation: on(env.REQUIRE_EMAIL_CONFIRMATION, false),
    limitedFederation: on(env.LIMITED_FEDERATION, false),
    wrapstodon: on(env.WRAPSTODON, true),
    cacheRemoteMedia: on(env.REMOTE_MEDIA_CACHE, true),
  };
}

export const SOFTWARE_VERSION = "4.6.0";
export const TERN_VERSION = "0.1.0";
