import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { lazyTable } from "../lazy-table";
import { bool, id, json, ms } from "../types";

/** A custom emoji as an account row keeps it (the columns of custom_emojis that rendering needs). */
export interface StoredEmoji {
  /** custom_emojis.id as stored (zero-padded). */
  id: string;
  shortcode: string;
  image_key: string | null;
  image_remote_url: string | null;
  visible_in_picker: number | boolean;
  /** Where a remote emoji lives (its Emoji tag's id); null for local ones. */
  uri: string | null;
}

/**
 * Who may feature an account in a collection without asking (automatic) or after its owner agrees (manual), as
 * Mastodon's FeatureApproval names them: read from a remote actor's interactionPolicy.canFeature when it is stored
 * (its Public collection → public, its followers → followers, its following → following, anything else →
 * unsupported_policy).
 */
export type FeaturePolicyLabel = "public" | "followers" | "following" | "unsupported_policy";
export interface FeaturePolicy {
  automatic: FeaturePolicyLabel[];
  manual: FeaturePolicyLabel[];
}

export interface ProfileField {
  name: string;
  value: string; // raw text for local accounts; sanitised HTML for remote ones
  verified_at: string | null;
}

/** Local and remote accounts in one table: `domain` is null for local accounts. */
export const accounts = lazyTable(() =>
  sqliteTable(
    "accounts",
    {
      id: id("id").primaryKey(),
      username: text("username").notNull(),
      domain: text("domain"),
      displayName: text("display_name").notNull().default(""),
      note: text("note").notNull().default(""), // rendered HTML
      noteSource: text("note_source").notNull().default(""), // raw text (local)
      fields: json<ProfileField[]>()("fields").notNull().default(sql`'[]'`),
      /** The custom emojis the name, note and fields use, resolved when they are written (services/statuses/custom-emojis.ts). */
      emojis: json<StoredEmoji[] | null>()("emojis"),
      avatarKey: text("avatar_key"), // R2 key (local upload)
      avatarRemoteUrl: text("avatar_remote_url"),
      headerKey: text("header_key"),
      /** A remote account's pictures: NULL when they are to be fetched into R2, else when that was queued (0053). */
      picturesCachedAt: ms("pictures_cached_at"),
      headerRemoteUrl: text("header_remote_url"),
      actorType: text("actor_type").notNull().default("Person"), // Person | Service | Group | Application | Organization
      locked: bool("locked").notNull().default(false),
      discoverable: bool("discoverable"),
      indexable: bool("indexable").notNull().default(false),
      hideCollections: bool("hide_collections"),
      memorial: bool("memorial").notNull().default(false),
      // ActivityPub
      uri: text("uri").notNull(),
      url: text("url"),
      inboxUrl: text("inbox_url"),
      sharedInboxUrl: text("shared_inbox_url"),
      outboxUrl: text("outbox_url"),
      followersUrl: text("followers_url"),
      followingUrl: text("following_url"),
      featuredUrl: text("featured_url"),
      featuredTagsUrl: text("featured_tags_url"),
      publicKeyPem: text("public_key_pem"),
      publicKeyId: text("public_key_id"),
      // Counters: kept by triggers (migrations/0001) for local rows; copies of what the remote says for remote rows.
      statusesCount: integer("statuses_count").notNull().default(0),
      followersCount: integer("followers_count").notNull().default(0),
      followingCount: integer("following_count").notNull().default(0),
      lastStatusAt: ms("last_status_at"),
      // Moderation
      suspendedAt: ms("suspended_at"),
      // Who suspended: "local" (staff here) or "remote" (its server sent Delete{Actor}; a later Update lifts it).
      suspensionOrigin: text("suspension_origin").$type<"local" | "remote">(),
      silencedAt: ms("silenced_at"),
      /** Staff marked the account's media sensitive (migrations/0014_sensitized.sql). */
      sensitizedAt: ms("sensitized_at"),
      /**
       * A domain block with reject_media covers the account's domain or a parent domain (migrations/0028): its avatar,
       * header, emojis and media attachments render as Mastodon renders files it never downloaded. Kept in step by
       * upsertRemoteAccount and the `domain_block_apply` effect (src/services/admin/blocks/domain-blocks.ts).
       */
      rejectMedia: bool("reject_media").notNull().default(false),
      movedToAccountId: id("moved_to_account_id"),
      /** Actor URIs of the account's other accounts (alsoKnownAs): local aliases, or the remote actor's own list (0027). */
      alsoKnownAs: json<string[] | null>()("also_known_as"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
      fetchedAt: ms("fetched_at"),
      // Remote accounts: when the featured collection (pinned statuses) was last fetched or claimed for fetching.
      featuredFetchedAt: ms("featured_fetched_at"),
      /** Remote accounts: their actor's interactionPolicy.canFeature (migrations/0056); null when it gives none. */
      featurePolicy: json<FeaturePolicy | null>()("feature_policy"),
      /** Remote accounts: their actor's `featuredCollections` (migrations/0056). */
      featuredCollectionsUrl: text("featured_collections_url"),
    },
    (t) => [
      // accounts_username_domain (lower(username), coalesce(domain, '')) is an expression index: see migrations/0001.
      uniqueIndex("accounts_uri").on(t.uri),
      index("accounts_domain").on(t.domain),
      index("accounts_public_key_id").on(t.publicKeyId),
      // By profile URL, as Mention tags and pasted links name accounts (migrations/0037).
      index("accounts_url").on(t.url).where(sql`url IS NOT NULL`),
      index("accounts_discoverable").on(t.id).where(sql`discoverable = 1`),
    ],
  ),
);

/**
 * Each account's display name for the FTS5 index `accounts_fts` (migrations/0030_account_search.sql): `id` is the
 * account id as an INTEGER (int64; read it in SQL as `printf('%020d', id)`, never as a JS number). Written only by
 * triggers on `accounts`; the index and the triggers exist only in the migration (drizzle has no virtual tables).
 */
export const accountSearch = lazyTable(() =>
  sqliteTable("account_search", {
    id: integer("id").primaryKey(),
    displayName: text("display_name").notNull().default(""),
  }),
);

/** Private keys of local accounts, kept apart so that no account query can carry them by accident. */
export const accountKeys = lazyTable(() =>
  sqliteTable("account_keys", {
    accountId: id("account_id").primaryKey(),
    privateKeyPem: text("private_key_pem").notNull(),
  }),
);

/** Staff roles (Mastodon's UserRole): permissions is a bitmask of lib/security/permissions.ts flags. */
export const userRoles = lazyTable(() =>
  sqliteTable("user_roles", {
    id: id("id").primaryKey(),
    name: text("name").notNull(),
    color: text("color").notNull().default(""),
    permissions: integer("permissions").notNull().default(0),
    position: integer("position").notNull().default(0),
    highlighted: bool("highlighted").notNull().default(false),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  }),
);

export interface UserSettings {
  "posting:default:visibility"?: "public" | "unlisted" | "private" | "direct";
  "posting:default:sensitive"?: boolean;
  "posting:default:language"?: string | null;
  "reading:expand:media"?: "default" | "show_all" | "hide_all";
  "reading:expand:spoilers"?: boolean;
  /** Staff notice mails (Mastodon's notification_emails.*; absent: on, as Mastodon's defaults). */
  "notification_emails:report"?: boolean;
  "notification_emails:pending_account"?: boolean;
  "notification_emails:trends"?: boolean;
}

/** Local sign-in identities (one per local account). */
export const users = lazyTable(() =>
  sqliteTable(
    "users",
    {
      id: id("id").primaryKey(),
      accountId: id("account_id").notNull(),
      email: text("email").notNull(),
      /** A new address awaiting its confirmation link (migrations/0047_mail.sql); `email` signs in meanwhile. */
      unconfirmedEmail: text("unconfirmed_email"),
      passwordHash: text("password_hash").notNull(),
      confirmedAt: ms("confirmed_at"),
      confirmationToken: text("confirmation_token"),
      approved: bool("approved").notNull().default(true),
      disabled: bool("disabled").notNull().default(false),
      roleId: id("role_id"),
      locale: text("locale"),
      reason: text("reason"),
      settings: json<UserSettings>()("settings").notNull().default(sql`'{}'`),
      chosenLanguages: json<string[] | null>()("chosen_languages"),
      signUpIp: text("sign_up_ip"),
      currentSignInAt: ms("current_sign_in_at"),
      lastActiveAt: ms("last_active_at"),
      createdAt: ms("created_at").notNull(),
      updatedAt: ms("updated_at").notNull(),
    },
    // users_email (lower(email)) is an expression index: see migrations/0001.
    (t) => [
      uniqueIndex("users_account").on(t.accountId),
      // migrations/0021_instance_stats.sql: active users are counted through these (instance documents, NodeInfo).
      index("users_last_active_at").on(t.lastActiveAt),
      index("users_current_sign_in_at").on(t.currentSignInAt),
    ],
  ),
);

/** Rows as D1 returns them (hidden fields such as password hashes stay in UserRow and never reach an entity). */
export type AccountRow = typeof accounts.$inferSelect;

/**
 * Account columns that rendering an account or a status never reads (the actor's key, the profile's source text, the
 * collections' URLs: about a third of a remote account's row). A status bundle leaves them out of the JSON it builds
 * for each author and mentioned account (src/entities/statuses/status.ts).
 */
export const ACCOUNT_UNRENDERED = [
  "publicKeyPem",
  "publicKeyId",
  "noteSource",
  "outboxUrl",
  "followingUrl",
  "featuredUrl",
  "featuredTagsUrl",
  "featuredCollectionsUrl",
] as const;
/** An account row without those columns: what status bundles hold and what account rendering needs. */
export type RenderAccountRow = Omit<AccountRow, (typeof ACCOUNT_UNRENDERED)[number]>;
export type UserRow = typeof users.$inferSelect;
export type RoleRow = typeof userRoles.$inferSelect;
/** An account with its local user and role, as staff screens show it (Mastodon's Admin::Account). */
export interface AdminAccountRow {
  account: AccountRow;
  user: UserRow | null;
  role: RoleRow | null;
}
