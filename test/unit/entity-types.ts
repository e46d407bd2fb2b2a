// Compile-time conformance of Tern's entity types (src/entities/*.ts) with masto's (the `masto` package, a maintained
// client's types for Mastodon's entities): each Tern type, its keys camel-cased as masto's deserializer does, must be
// assignable to masto's type, so a field that drifts from what clients expect fails `tsc -p tsconfig.test.json`
// (`npm run check`). Type-only: vitest runs *.test.ts files, this one is checked by tsc alone.
//
// Where masto's type disagrees with Mastodon's real JSON (docs.joinmastodon.org) and Tern follows Mastodon, the masto
// type is patched below, one line of reason per field. Fields Mastodon added after 4.5.0 are optional here: Tern answers
// as Mastodon 4.5 (src/env.ts SOFTWARE_VERSION). Tern's own extras (muting_expires_at, image_description, …) pass as a
// superset. Entities with no masto counterpart (admin relays, trends providers, archives, imports) are not listed.
import type { mastodon } from "masto";
import type { MastodonAccount, MastodonCredentialAccount, MastodonRole } from "../../src/entities/accounts/account";
import type { MastodonAdminAccount } from "../../src/entities/admin/admin-account";
import type { MastodonAdminCanonicalEmailBlock, MastodonAdminEmailDomainBlock, MastodonAdminIpBlock } from "../../src/entities/admin/admin-access-block";
import type { MastodonAdminDomainAllow, MastodonAdminDomainBlock } from "../../src/entities/admin/admin-domain-block";
import type { MastodonAdminReport } from "../../src/entities/admin/admin-report";
import type { MastodonAdminTag } from "../../src/entities/admin/admin-trends";
import type { MastodonAnnouncement } from "../../src/entities/instance/announcement";
import type { MastodonConversation } from "../../src/entities/notifications/conversation";
import type { MastodonCustomEmoji } from "../../src/entities/instance/custom-emoji";
import type { MastodonFilter, MastodonFilterKeyword, MastodonFilterStatus, MastodonV1Filter } from "../../src/entities/statuses/filter";
import type { MastodonDomainBlock, MastodonInstance, MastodonInstanceV1, MastodonPolicyText, MastodonRule } from "../../src/entities/instance/instance";
import type { MastodonList } from "../../src/entities/accounts/list";
import type { MastodonMediaAttachment } from "../../src/entities/statuses/media";
import type { MastodonNotification } from "../../src/entities/notifications/notification";
import type { MastodonGroupedNotifications } from "../../src/entities/notifications/notification-group";
import type { MastodonNotificationPolicy } from "../../src/entities/notifications/notification-policy";
import type { MastodonNotificationRequest } from "../../src/entities/notifications/notification-request";
import type { MastodonPoll } from "../../src/entities/statuses/poll";
import type { MastodonPreviewCard, MastodonTrendLink } from "../../src/entities/statuses/preview-card";
import type { MastodonQuoteApproval } from "../../src/entities/statuses/quote";
import type { MastodonRelationship } from "../../src/entities/accounts/relationship";
import type { MastodonReport } from "../../src/entities/accounts/report";
import type { MastodonScheduledStatus } from "../../src/entities/statuses/scheduled-status";
import type { MastodonStatus } from "../../src/entities/statuses/status";
import type { MastodonStatusEdit } from "../../src/entities/statuses/status-edit";
import type { MastodonFeaturedTag, MastodonTag } from "../../src/entities/instance/tag";

/** snake_case → camelCase, as change-case's camelCase (masto's deserializer) turns a key. */
type CamelKey<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<CamelKey<T>>}` : S;
/** A JSON type as masto hands it to a client: every key camel-cased, at every depth. */
export type Camelize<T> = T extends readonly (infer U)[]
  ? Camelize<U>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelKey<K> : K]: Camelize<T[K]> }
    : T;

/** Compiles only when T is assignable to U (the error names the field that is not). */
export type Conforms<T extends U, U> = T;
/** masto's type T with the fields of P replaced (member by member when T is a union). */
type Patch<T, P> = T extends unknown ? Omit<T, keyof P> & P : never;
/** One member per `type` value: TS relates a union of types to masto's discriminated members one literal at a time. */
type PerType<T> = T extends { type: infer K } ? (K extends unknown ? Omit<T, "type"> & { type: K } : never) : never;

// ---- masto's types, patched where Mastodon renders otherwise ----

interface Account extends Omit<mastodon.v1.Account, "featureApproval" | "lastStatusAt" | "moved" | "roles"> {
  /** Added in 4.6.0 (Collections). */
  featureApproval?: unknown;
  /** Account#last_status_at: "nullable … or null if no statuses". */
  lastStatusAt: string | null;
  moved?: Account | null;
  roles: Pick<Role, "id" | "name" | "color">[];
}

interface Role extends Omit<mastodon.v1.Role, "id" | "permissions" | "position" | "createdAt" | "updatedAt"> {
  /** Role#id and Role#permissions are Strings (REST::RoleSerializer casts them); masto says number. */
  id: string;
  permissions: string;
  // position, created_at and updated_at are not in Mastodon's Role entity; collection_limit is (4.6.0).
}

interface AccountSource extends Omit<mastodon.v1.AccountSource, "role" | "quotePolicy"> {
  // Account#source has no `role` (CredentialAccount#role is beside it, checked below).
  /** source[quote_policy] is public | followers | nobody; masto types it as a QuoteApproval flag. */
  quotePolicy: "public" | "followers" | "nobody";
}

interface CredentialAccount extends Account {
  source: AccountSource;
  role: Role;
}

interface MediaAttachment extends Omit<mastodon.v1.MediaAttachment, "previewUrl" | "meta"> {
  /** MediaAttachment#preview_url is nullable (Tern: no thumbnail of a local video or audio file, or still processing). */
  previewUrl: string | null;
  /** MediaAttachment#meta is a free-form Hash; an audio file's `original` has no width or height. */
  meta?: { focus?: mastodon.v1.MediaAttachmentMetaFocus | null; [key: string]: unknown } | null;
}

interface Poll extends Omit<mastodon.v1.Poll, "options"> {
  /** Poll::Option has no emojis (Poll#emojis has them), and its votes_count is null while the totals are hidden. */
  options: (Omit<mastodon.v1.PollOption, "emojis" | "votesCount"> & { votesCount: number | null })[];
}

interface PreviewCard extends Omit<mastodon.v1.PreviewCard, "blurhash" | "authors" | "language"> {
  /** PreviewCard#blurhash is nullable (Tern computes none). */
  blurhash: string | null;
  /** REST::PreviewCardSerializer renders language (undocumented), null when the page named none. */
  language?: string | null;
  authors: PreviewCardAuthor[];
}

interface PreviewCardAuthor extends Omit<mastodon.v1.PreviewCardAuthor, "account"> {
  account: Account | null;
}

interface TrendLink extends PreviewCard {
  history: mastodon.v1.TagHistory[];
}

/** Status::Tag is name and url (REST::StatusSerializer::TagSerializer); masto reuses the Tag entity, which has an id. */
type StatusTag = Omit<mastodon.v1.Tag, "id">;

interface Quote extends Omit<mastodon.v1.Quote, "quotedStatus"> {
  quotedStatus?: Status | null;
}

interface FilterResult extends Omit<mastodon.v1.FilterResult, "filter"> {
  /** FilterResult#filter is the Filter without its keywords and statuses (they are rendered only when asked for). */
  filter: Omit<mastodon.v2.Filter, "keywords" | "statuses">;
}

interface Status extends Omit<mastodon.v1.Status, "application" | "account" | "reblog" | "mediaAttachments" | "tags" | "poll" | "card" | "quote" | "filtered"> {
  /** Status#application is optional: Mastodon gives it for local statuses only. */
  application?: mastodon.v1.Application;
  account: Account;
  reblog?: Status | null;
  mediaAttachments: MediaAttachment[];
  tags: StatusTag[];
  poll?: Poll | null;
  card?: PreviewCard | null;
  quote?: Quote | mastodon.v1.ShallowQuote | null;
  filtered?: FilterResult[];
}

interface StatusEdit extends Omit<mastodon.v1.StatusEdit, "account" | "mediaAttachments"> {
  account: Account;
  mediaAttachments: MediaAttachment[];
}

interface Relationship extends Omit<mastodon.v1.Relationship, "languages"> {
  /** Relationship#languages is nullable (no language filter on the follow). */
  languages: string[] | null;
}

interface Report extends Omit<mastodon.v1.Report, "targetAccount"> {
  /** null only when the reported account's row is gone. */
  targetAccount: Account | null;
}

type WithStatus<T> = Extract<T, { status: mastodon.v1.Status } | { statusId: string }>;
type WithReport<T> = Extract<T, { report: mastodon.v1.Report }>;
type Plain<T> = Exclude<T, WithStatus<T> | WithReport<T>>;

type Notification =
  | Patch<WithStatus<mastodon.v1.Notification>, { account: Account; status: Status }>
  | Patch<WithReport<mastodon.v1.Notification>, { account: Account; report: Report }>
  | Patch<Plain<mastodon.v1.Notification>, { account: Account }>;

/** GroupedNotificationsResults#notification_groups[]#sample_account_ids is an Array of String; masto says string. */
type NotificationGroup =
  | Patch<WithReport<mastodon.v1.NotificationGroup>, { sampleAccountIds: string[]; report: Report }>
  | Patch<Exclude<mastodon.v1.NotificationGroup, WithReport<mastodon.v1.NotificationGroup>>, { sampleAccountIds: string[] }>;

interface GroupedNotifications extends Omit<mastodon.v1.GroupedNotificationsResults, "accounts" | "partialAccounts" | "statuses" | "notificationGroups"> {
  accounts: Account[];
  partialAccounts?: Pick<Account, "id" | "acct" | "url" | "avatar" | "avatarStatic" | "locked" | "bot">[];
  statuses: Status[];
  notificationGroups: NotificationGroup[];
}

// Tern's `move` notification (Pleroma's and Akkoma's, with `target`) has no masto counterpart: left out of the check.
type TernNotification = Exclude<PerType<MastodonNotification>, { type: "move" }>;
type TernGroupedNotifications = Omit<MastodonGroupedNotifications, "notification_groups"> & {
  notification_groups: Exclude<PerType<MastodonGroupedNotifications["notification_groups"][number]>, { type: "move" }>[];
};

interface NotificationRequest extends Omit<mastodon.v1.NotificationRequest, "account" | "lastStatus" | "notificationsCount"> {
  account: Account;
  lastStatus?: Status | null;
  /** NotificationRequest#notifications_count is a String. */
  notificationsCount: string;
}

interface Conversation extends Omit<mastodon.v1.Conversation, "accounts" | "lastStatus"> {
  accounts: Account[];
  lastStatus?: Status | null;
}

interface Announcement extends Omit<mastodon.v1.Announcement, "startsAt" | "endsAt" | "publishedAt" | "tags" | "reactions"> {
  /** Announcement#starts_at and #ends_at are nullable (no schedule). */
  startsAt: string | null;
  endsAt: string | null;
  /** null only for an announcement not yet published, which only staff's listing (admin API) shows. */
  publishedAt: string | null;
  /** Announcement#tags are Status::Tag (name and url). */
  tags: StatusTag[];
  /** Reaction#me is given only with a user, #url and #static_url only for a custom emoji. */
  reactions: (Omit<mastodon.v1.Reaction, "me" | "url" | "staticUrl"> & Partial<Pick<mastodon.v1.Reaction, "me" | "url" | "staticUrl">>)[];
}

interface ScheduledStatus extends Omit<mastodon.v1.ScheduledStatus, "params" | "mediaAttachments"> {
  /** params has no id, and params[application_id] is deprecated ("can be ignored"); Tern does not render it. */
  params: Omit<mastodon.v1.StatusParams, "id" | "applicationId" | "visibility" | "sensitive" | "spoilerText"> & {
    /** params[sensitive] and [spoiler_text] are nullable: the request's params as sent (as Mastodon stores them). */
    sensitive: boolean | null;
    spoilerText: string | null;
    /** Likewise null when the client sent no visibility (Mastodon's PostStatusService stores the option as given). */
    visibility: mastodon.v1.StatusVisibility | null;
  };
  mediaAttachments: MediaAttachment[];
}

interface Instance extends Omit<mastodon.v2.Instance, "thumbnail" | "configuration" | "apiVersions" | "contact" | "rules"> {
  /** thumbnail[description] was added in 4.6.0; thumbnail[blurhash] and [versions] are optional. */
  thumbnail: Omit<mastodon.v2.InstanceThumbnail, "description" | "blurhash" | "versions"> & {
    blurhash?: string | null;
    versions?: Partial<mastodon.v2.InstanceThumbnailVersions>;
  };
  configuration: Omit<mastodon.v2.InstanceConfiguration, "accounts"> & {
    /** Only max_featured_tags and max_pinned_statuses predate 4.6.0. */
    accounts: Pick<mastodon.v2.InstanceAccountsConfiguration, "maxFeaturedTags" | "maxPinnedStatuses">;
  };
  /** api_versions[mastodon] is an Integer (10 for Mastodon 4.6). */
  apiVersions: { mastodon: number };
  /** contact[account] is nullable (no contact account chosen). */
  contact: { email: string; account: Account | null };
  rules: Rule[];
}

interface InstanceV1 extends Omit<mastodon.v1.Instance, "contactAccount"> {
  contactAccount?: Account | null;
}

type Rule = mastodon.v1.Rule;

interface FeaturedTag extends Omit<mastodon.v1.FeaturedTag, "statusesCount"> {
  /** FeaturedTag#statuses_count is a String. */
  statusesCount: string;
}

interface AdminAccount extends Omit<mastodon.v1.admin.Account, "email" | "locale" | "role" | "account"> {
  /** A remote account has no user: no e-mail, locale or role (Mastodon renders them from the user too). */
  email: string | null;
  locale: string | null;
  role: Role | null;
  account: Account;
}

interface AdminReport extends Omit<mastodon.v1.admin.Report, "account" | "targetAccount" | "assignedAccount" | "actionTakenByAccount" | "statuses"> {
  /** Admin::Report's accounts are Admin::Account (masto says Account); null only when an account's row is gone. */
  account: AdminAccount | null;
  targetAccount: AdminAccount | null;
  assignedAccount?: AdminAccount | null;
  /** Admin::Report#action_taken_by_account is nullable (not resolved yet). */
  actionTakenByAccount: AdminAccount | null;
  statuses: Status[];
}

interface AdminDomainBlock extends Omit<mastodon.v1.admin.DomainBlock, "rejectReposts"> {
  /** Admin::DomainBlock#reject_reports (masto misspells it rejectReposts). */
  rejectReports: boolean;
}

interface AdminIpBlock extends Omit<mastodon.v1.admin.IpBlock, "expiresAt"> {
  /** Admin::IpBlock#expires_at is a nullable Datetime String (masto says number). */
  expiresAt: string | null;
}

// ---- the checks ----

type Assert<T extends true> = T;
type Inhabited<T> = [T] extends [never] ? false : true;
/** The filtered unions above still hold members (a check of `never` would pass whatever Tern renders). */
export type Inhabitants = [
  Assert<Inhabited<TernNotification>>,
  Assert<Inhabited<TernGroupedNotifications["notification_groups"][number]>>,
  Assert<Inhabited<Extract<TernNotification, { status: unknown }>>>,
  Assert<Inhabited<Extract<TernNotification, { report: unknown }>>>,
];

export type Checks = [
  Conforms<Camelize<MastodonAccount>, Account>,
  Conforms<Camelize<MastodonCredentialAccount>, CredentialAccount>,
  Conforms<Camelize<MastodonRole>, Role>,
  Conforms<Camelize<MastodonStatus>, Status>,
  Conforms<Camelize<MastodonStatusEdit>, StatusEdit>,
  Conforms<Camelize<MastodonMediaAttachment>, MediaAttachment>,
  Conforms<Camelize<MastodonPoll>, Poll>,
  Conforms<Camelize<MastodonPreviewCard>, PreviewCard>,
  Conforms<Camelize<MastodonTrendLink>, TrendLink>,
  Conforms<Camelize<MastodonCustomEmoji>, mastodon.v1.CustomEmoji>,
  Conforms<Camelize<MastodonQuoteApproval>, mastodon.v1.QuoteApproval>,
  Conforms<Camelize<MastodonRelationship>, Relationship>,
  Conforms<Camelize<TernNotification>, Notification>,
  Conforms<Camelize<TernGroupedNotifications>, GroupedNotifications>,
  Conforms<Camelize<MastodonNotificationRequest>, NotificationRequest>,
  Conforms<Camelize<MastodonNotificationPolicy>, mastodon.v2.NotificationPolicy>,
  Conforms<Camelize<MastodonConversation>, Conversation>,
  Conforms<Camelize<MastodonFilter>, mastodon.v2.Filter>,
  Conforms<Camelize<MastodonFilterKeyword>, mastodon.v1.FilterKeyword>,
  Conforms<Camelize<MastodonFilterStatus>, mastodon.v1.FilterStatus>,
  Conforms<Camelize<MastodonV1Filter>, mastodon.v1.Filter>,
  Conforms<Camelize<MastodonList>, mastodon.v1.List>,
  Conforms<Camelize<MastodonAnnouncement>, Announcement>,
  Conforms<Camelize<MastodonScheduledStatus>, ScheduledStatus>,
  Conforms<Camelize<MastodonReport>, Report>,
  Conforms<Camelize<MastodonInstance>, Instance>,
  Conforms<Camelize<MastodonInstanceV1>, InstanceV1>,
  Conforms<Camelize<MastodonRule>, Rule>,
  Conforms<Camelize<MastodonDomainBlock>, mastodon.v1.DomainBlock>,
  Conforms<Camelize<MastodonPolicyText>, mastodon.v1.ExtendedDescription>,
  Conforms<Camelize<MastodonTag>, mastodon.v1.Tag>,
  Conforms<Camelize<MastodonFeaturedTag>, FeaturedTag>,
  Conforms<Camelize<MastodonAdminAccount>, AdminAccount>,
  Conforms<Camelize<MastodonAdminReport>, AdminReport>,
  Conforms<Camelize<MastodonAdminDomainBlock>, AdminDomainBlock>,
  Conforms<Camelize<MastodonAdminDomainAllow>, mastodon.v1.admin.DomainAllow>,
  Conforms<Camelize<MastodonAdminCanonicalEmailBlock>, mastodon.v1.admin.CanonicalEmailBlock>,
  Conforms<Camelize<MastodonAdminEmailDomainBlock>, mastodon.v1.admin.EmailDomainBlock>,
  Conforms<Camelize<MastodonAdminIpBlock>, AdminIpBlock>,
  Conforms<Camelize<MastodonAdminTag>, mastodon.v1.admin.Tag>,
];
