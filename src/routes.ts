// Every route module and where it is mounted. One module per Mastodon resource, path-mirrored.
import type { RouteGroup } from "./route-group";
import accounts from "./api/v1/accounts/accounts";
import accountsRegister from "./api/v1/accounts/accounts-register";
import adminAnnouncements from "./api/v1/admin/announcements";
import adminDomainAllows from "./api/v1/admin/domain-allows";
import adminDomainBlocks from "./api/v1/admin/domain-blocks";
import { canonicalEmailBlocks as adminCanonicalEmailBlocks, emailDomainBlocks as adminEmailDomainBlocks } from "./api/v1/admin/email-blocks";
import adminIpBlocks from "./api/v1/admin/ip-blocks";
import adminRelays from "./api/v1/admin/relays";
import announcements from "./api/v1/instance/announcements";
import adminAccounts from "./api/v1/admin/accounts";
import adminMeasures from "./api/v1/admin/measures";
import adminReports from "./api/v1/admin/reports";
import adminTrends from "./api/v1/admin/trends";
import adminTags from "./api/v1/admin/tags";
import adminAccountsV2 from "./api/v2/admin/accounts";
import polls from "./api/v1/statuses/polls";
import apps from "./api/v1/accounts/apps";
import annualReports from "./api/v1/accounts/annual-reports";
import asyncRefreshes from "./api/v1/accounts/async-refreshes";
import collections from "./api/v1/relationships/collections";
import accountCollections from "./api/v1/relationships/account-collections";
import blocks from "./api/v1/relationships/blocks";
import conversations from "./api/v1/notifications/conversations";
import customEmojis from "./api/v1/instance/custom-emojis";
import domainBlocks from "./api/v1/relationships/domain-blocks";
import emails from "./api/v1/accounts/emails";
import endorsements from "./api/v1/relationships/endorsements";
import { bookmarks, favourites } from "./api/v1/statuses/own-status-lists";
import featuredTags from "./api/v1/instance/featured-tags";
import filtersV1 from "./api/v1/accounts/filters";
import followRequests from "./api/v1/relationships/follow-requests";
import followedTags from "./api/v1/instance/followed-tags";
import follows from "./api/v1/relationships/follows";
import instanceV1 from "./api/v1/instance/instance";
import lists from "./api/v1/relationships/lists";
import markers from "./api/v1/accounts/markers";
import media from "./api/v1/statuses/media";
import mutes from "./api/v1/relationships/mutes";
import notificationRequests from "./api/v1/notifications/notification-requests";
import notifications from "./api/v1/notifications/notifications";
import preferences from "./api/v1/accounts/preferences";
import profile from "./api/v1/accounts/profile";
import push from "./api/v1/accounts/push";
import reports from "./api/v1/relationships/reports";
import scheduledStatuses from "./api/v1/statuses/scheduled-statuses";
import statuses from "./api/v1/statuses/statuses";
import streaming from "./api/v1/instance/streaming";
import health from "./api/health";
import stubs from "./api/v1/instance/stubs";
import suggestions from "./api/v1/relationships/suggestions";
import tags from "./api/v1/instance/tags";
import timelines from "./api/v1/statuses/timelines";
import trends from "./api/v1/instance/trends";
import filtersV2 from "./api/v2/filters";
import instanceV2 from "./api/v2/instance";
import mediaV2 from "./api/v2/media";
import notificationsV2 from "./api/v2/notifications";
import search from "./api/v2/search";
import wellKnown from "./federation/http/well-known";
import federation from "./federation/http/routes";
import oauth from "./oauth/routes";
import media_files from "./api/media/serve";
import mediaDefaults from "./api/media/defaults";
import web from "./web/routes";
import ternExports from "./api/tern/exports";
import ternImports from "./api/tern/imports";
import ternArchiveImports from "./api/tern/archive-imports";
import ternAliases from "./api/tern/aliases";
import ternMigration from "./api/tern/migration";
import settingsData from "./web/settings-data";

export const mounts: [string, RouteGroup][] = [
  // First: fixed paths such as /api/v1/notifications/requests must win over /:id routes of the resource modules.
  ["/health", health],
  ["/api", stubs],
  ["/api", suggestions],
  ["/api/v1/accounts", accountCollections],
  ["/api/v1_alpha/accounts", accountCollections],
  ["/api/v1/accounts", accountsRegister],
  ["/api/v1/accounts", accounts],
  // Admin API part B (reports, dashboard measures, trend review)
  ["/api/v1/admin/reports", adminReports],
  ["/api/v1/admin/trends", adminTrends],
  ["/api/v1/admin/tags", adminTags],
  ["/api/v1/admin", adminMeasures],
  ["/api/v1/admin/accounts", adminAccounts],
  ["/api/v2/admin/accounts", adminAccountsV2],
  ["/api/v1/admin/announcements", adminAnnouncements],
  // Admin API part A (federation and access blocks)
  ["/api/v1/admin/domain_blocks", adminDomainBlocks],
  ["/api/v1/admin/domain_allows", adminDomainAllows],
  ["/api/v1/admin/canonical_email_blocks", adminCanonicalEmailBlocks],
  ["/api/v1/admin/email_domain_blocks", adminEmailDomainBlocks],
  ["/api/v1/admin/ip_blocks", adminIpBlocks],
  ["/api/v1/admin/relays", adminRelays],
  ["/api/v1/announcements", announcements],
  ["/api/v1/polls", polls],
  ["/api/v1/annual_reports", annualReports],
  ["/api/v1_alpha/async_refreshes", asyncRefreshes],
  ["/api/v1/collections", collections],
  ["/api/v1_alpha/collections", collections],
  ["/api/v1/apps", apps],
  ["/api/v1/blocks", blocks],
  ["/api/v1/bookmarks", bookmarks],
  ["/api/v1/conversations", conversations],
  ["/api/v1/custom_emojis", customEmojis],
  ["/api/v1/domain_blocks", domainBlocks],
  ["/api/v1/emails", emails],
  ["/api/v1/endorsements", endorsements],
  ["/api/v1/favourites", favourites],
  ["/api/v1/featured_tags", featuredTags],
  ["/api/v1/filters", filtersV1],
  ["/api/v1/follow_requests", followRequests],
  ["/api/v1/followed_tags", followedTags],
  ["/api/v1/follows", follows],
  ["/api/v1/instance", instanceV1],
  ["/api/v1/lists", lists],
  ["/api/v1/markers", markers],
  ["/api/v1/media", media],
  ["/api/v1/mutes", mutes],
  // requests and policy before /:id
  ["/api/v1/notifications", notificationRequests],
  ["/api/v1/notifications", notifications],
  ["/api/v1/preferences", preferences],
  ["/api/v1/profile", profile],
  ["/api/v1/push", push],
  ["/api/v1/reports", reports],
  ["/api/v1/scheduled_statuses", scheduledStatuses],
  ["/api/v1/statuses", statuses],
  ["/api/v1/streaming", streaming],
  ["/api/v1/tags", tags],
  ["/api/v1/timelines", timelines],
  ["/api/v1/trends", trends],
  ["/api/v2/filters", filtersV2],
  ["/api/v2/instance", instanceV2],
  ["/api/v2/media", mediaV2],
  ["/api/v2/notifications", notificationsV2],
  ["/api/v2/search", search],
  // Account data export and import: Tern's API, and the settings pages at Mastodon's paths
  ["/api/tern/exports", ternExports],
  ["/api/tern/imports", ternImports],
  ["/api/tern/archive_imports", ternArchiveImports],
  // Account migration: aliases (alsoKnownAs) and moving out (src/services/accounts/account-migration.ts)
  ["/api/tern/aliases", ternAliases],
  ["/api/tern/migration", ternMigration],
  ["/settings", settingsData],
  ["/oauth", oauth],
  ["/media", media_files],
  ["/", mediaDefaults],
  ["/", wellKnown],
  ["/", federation],
  ["/", web],
];
