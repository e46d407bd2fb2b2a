// Conformance with masto's types of the entities that moved into src/entities/ from routes and services (Marker,
// WebPushSubscription, Application, Token, FilterResult, Preferences, FamiliarFollowers, Suggestion, Search, instance
// Activity, StatusSource, a profile's FeaturedTag, Context, Admin::Measure, ::Dimension, ::Cohort), checked by tsc (tsconfig.test.json) as test/unit/entity-types.ts
// checks the others: each Tern type, keys camel-cased as masto's deserializer does, must be assignable to masto's type,
// patched where masto disagrees with Mastodon's real JSON, one line of reason each. A field holding an Account, Status
// or Tag is that entity's type, checked in entity-types.ts, and left out here. The `it`s below check what the
// renderers answer, key order included, so vitest has something to run.
import type { mastodon } from "masto";
// Not re-exported by masto's entity index: their own modules.
import type { Collection as MastoCollection, WrappedCollection } from "masto/mastodon/entities/v1/collection.js";
import type { WrappedCollectionItem } from "masto/mastodon/entities/v1/collection-item.js";
import type { AnnualReport as MastoAnnualReport, AnnualReportData as MastoAnnualReportData } from "masto/mastodon/entities/v1/annual-report.js";
import { describe, expect, it } from "vitest";
import type { MastodonAccount } from "../../src/entities/accounts/account";
import type { MastodonAnnualReport, MastodonAnnualReports } from "../../src/entities/accounts/annual-report";
import type { MastodonProfile } from "../../src/entities/accounts/profile";
import type { MastodonCollection, MastodonCollectionItem, MastodonCollectionWithAccounts } from "../../src/entities/accounts/collection";
import type { MastodonAdminCohort } from "../../src/entities/admin/admin-cohort";
import type { MastodonAdminDimension } from "../../src/entities/admin/admin-dimension";
import { type MastodonAdminMeasure, renderAdminMeasure } from "../../src/entities/admin/admin-measure";
import { type MastodonApplication, type MastodonCredentialApplication, renderCredentialApplication } from "../../src/entities/settings/application";
import type { MastodonContext } from "../../src/entities/statuses/context";
import type { MastodonFamiliarFollowers } from "../../src/entities/accounts/familiar-followers";
import type { MastodonFilterResult } from "../../src/entities/statuses/filter-result";
import { type MastodonInstanceActivity, renderInstanceActivity } from "../../src/entities/instance/instance-activity";
import { type MastodonMarker, renderMarkers } from "../../src/entities/settings/marker";
import type { MastodonMutedAccount } from "../../src/entities/accounts/muted-account";
import { type MastodonPreferences, renderPreferences } from "../../src/entities/settings/preferences";
import { type MastodonWebPushSubscription, renderPushSubscription } from "../../src/entities/settings/push-subscription";
import type { MastodonSearch } from "../../src/entities/instance/search";
import type { MastodonStatus } from "../../src/entities/statuses/status";
import { type MastodonStatusSource, renderStatusSource } from "../../src/entities/statuses/status-source";
import { type MastodonSuggestion, renderSuggestion } from "../../src/entities/accounts/suggestion";
import type { MastodonProfileFeaturedTag, MastodonTag } from "../../src/entities/instance/tag";
import { type MastodonToken, renderToken } from "../../src/entities/settings/token";
import type { Camelize, Conforms } from "./entity-types";

// ---- masto's types, patched where Mastodon renders otherwise ----

/** Marker holds only the timelines asked for (GET) or saved (POST) that have a position; masto requires both. */
type Marker = Partial<mastodon.v1.Marker>;

interface WebPushSubscription extends Omit<mastodon.v1.WebPushSubscription, "alerts"> {
  /** alerts are flat, `admin.sign_up` and `admin.report` (REST::WebPushSubscriptionSerializer); masto nests them in `admin`. */
  alerts: Omit<mastodon.v1.WebPushSubscriptionAlerts, "admin"> & { "admin.signUp": boolean; "admin.report": boolean };
}

interface CredentialApplication extends Omit<mastodon.v1.Client, "clientSecretExpiresAt"> {
  /** CredentialApplication#client_secret_expires_at is an Integer, 0 when the secret does not expire; masto says string. */
  clientSecretExpiresAt: number;
}

interface FilterResult extends Omit<mastodon.v1.FilterResult, "filter"> {
  /** FilterResult#filter is the Filter without its keywords and statuses (REST::FilterSerializer without rules). */
  filter: Omit<mastodon.v2.Filter, "keywords" | "statuses">;
}

interface Preferences extends Omit<mastodon.v1.Preference, "posting:default:language" | "reading:autoplay:gifs"> {
  /** Preferences#posting:default:language is nullable (no default language chosen). */
  "posting:default:language": string | null;
  /** Not in Mastodon's documented Preferences entity; Tern keeps no such setting. */
  "reading:autoplay:gifs"?: boolean;
}

interface AdminCohort extends Omit<mastodon.v1.admin.Cohort, "data"> {
  /** Admin::Cohort data[][value] is a String (Admin::Metrics::Retention renders value.to_s); masto says number. */
  data: (Omit<mastodon.v1.admin.CohortData, "value"> & { value: string })[];
}

interface AnnualReport extends Omit<MastoAnnualReport, "data"> {
  /**
   * Schema 2's data (Mastodon 4.5 and later) has no type distribution, apps, interacted-with or reblogged accounts, and
   * schema 1's percentiles are an object of two numbers; masto's type lists every schema's keys and says number.
   */
  data: Pick<MastoAnnualReportData, "archetype" | "topStatuses" | "timeSeries" | "topHashtags" | "typeDistribution"> & {
    percentiles: { followers: number; statuses: number };
  };
}

interface Profile extends Omit<mastodon.v1.Profile, "featuredTags" | "fields"> {
  /** FeaturedTag#statuses_count is a String (entity-types.ts checks the FeaturedTag itself). */
  featuredTags: (Omit<mastodon.v1.FeaturedTag, "statusesCount"> & { statusesCount: string })[];
  /** A field's verified_at is null until verified; masto's AccountField has it optional. */
  fields: { name: string; value: string; verifiedAt: string | null }[];
}

// ---- the checks ----

type Assert<T extends true> = T;

type Checks = [
  Conforms<Camelize<MastodonMarker>, Marker>,
  Conforms<Camelize<MastodonWebPushSubscription>, WebPushSubscription>,
  Conforms<Camelize<MastodonApplication>, mastodon.v1.Application>,
  Conforms<Camelize<MastodonCredentialApplication>, CredentialApplication>,
  Conforms<Camelize<MastodonToken>, mastodon.v1.Token>,
  Conforms<Camelize<MastodonFilterResult>, FilterResult>,
  Conforms<Camelize<MastodonPreferences>, Preferences>,
  Conforms<Camelize<MastodonStatusSource>, mastodon.v1.StatusSource>,
  Conforms<Camelize<MastodonInstanceActivity>, mastodon.v1.Activity>,
  Conforms<Camelize<Omit<MastodonFamiliarFollowers, "accounts">>, Omit<mastodon.v1.FamiliarFollowers, "accounts">>,
  Conforms<Camelize<Omit<MastodonSuggestion, "account">>, Omit<mastodon.v1.Suggestion, "account">>,
  Conforms<Camelize<Omit<MastodonSearch, "accounts" | "statuses" | "hashtags">>, Omit<mastodon.v2.Search, "accounts" | "statuses" | "hashtags">>,
  // The nested entities are the ones entity-types.ts checks.
  Assert<MastodonFamiliarFollowers["accounts"] extends MastodonAccount[] ? true : false>,
  Assert<MastodonSuggestion["account"] extends MastodonAccount ? true : false>,
  Assert<MastodonSearch extends { accounts: MastodonAccount[]; statuses: MastodonStatus[]; hashtags: MastodonTag[] } ? true : false>,
  // MutedAccount has no masto type: an Account with mute_expires_at (Mastodon's REST::MutedAccountSerializer).
  Assert<MastodonMutedAccount extends MastodonAccount & { mute_expires_at: string | null } ? true : false>,
  // A profile's FeaturedTag answers statuses_count as a number where Mastodon renders a String (as it always did here;
  // GET /api/v1/featured_tags answers the String): a known difference, kept so that no answer changes.
  Conforms<Camelize<Omit<MastodonProfileFeaturedTag, "statuses_count">>, Omit<mastodon.v1.FeaturedTag, "statusesCount">>,
  Assert<MastodonProfileFeaturedTag["statuses_count"] extends number ? true : false>,
  Assert<MastodonContext extends { ancestors: MastodonStatus[]; descendants: MastodonStatus[] } ? true : false>,
  Assert<keyof MastodonContext extends keyof mastodon.v1.Context ? true : false>,
  // A measure's and a dimension's key is the one asked for, a string (masto lists the keys Mastodon knows).
  Conforms<Camelize<Omit<MastodonAdminMeasure, "key">>, Omit<mastodon.v1.admin.Measure, "key">>,
  Conforms<Camelize<Omit<MastodonAdminDimension, "key">>, Omit<mastodon.v1.admin.Dimension, "key">>,
  Conforms<Camelize<MastodonAdminCohort>, AdminCohort>,
  Conforms<Camelize<MastodonAnnualReport>, AnnualReport>,
  Conforms<Camelize<MastodonProfile>, Profile>,
  Conforms<Camelize<MastodonCollection>, MastoCollection>,
  Conforms<Camelize<{ collection: MastodonCollection }>, WrappedCollection>,
  Conforms<Camelize<{ collection_item: MastodonCollectionItem }>, WrappedCollectionItem>,
  Assert<MastodonCollectionWithAccounts extends { collection: MastodonCollection; accounts: MastodonAccount[] } ? true : false>,
  Assert<MastodonAnnualReports extends { annual_reports: MastodonAnnualReport[]; accounts: MastodonAccount[]; statuses: MastodonStatus[] } ? true : false>,
];

// ---- what the renderers answer ----

describe("entities moved into src/entities/", () => {
  it("conform to masto's types (checked by tsc: this file does not compile otherwise)", () => {
    const checked: Checks["length"] = 30;
    expect(checked).toBe(30);
  });

  it("render the JSON their routes answered, keys in the same order", () => {
    expect(JSON.stringify(renderMarkers([{ accountId: "1", timeline: "home", lastReadId: "42", version: 3, updatedAt: Date.UTC(2024, 0, 2) }]))).toBe(
      '{"home":{"last_read_id":"42","version":3,"updated_at":"2024-01-02T00:00:00.000Z"}}',
    );
    expect(JSON.stringify(renderToken({ accessToken: "t", scopes: "read write", createdAt: 1_700_000_000_999 }))).toBe(
      '{"access_token":"t","token_type":"Bearer","scope":"read write","created_at":1700000000}',
    );
    expect(renderPreferences({ "posting:default:language": "" })).toStrictEqual({
      "posting:default:visibility": "public",
      "posting:default:sensitive": false,
      "posting:default:language": null,
      "posting:default:quote_policy": "public",
      "reading:expand:media": "default",
      "reading:expand:spoilers": false,
    });
    expect(renderInstanceActivity({ week: 1_700_000_000_500, statuses: 2, logins: 1, registrations: 0 })).toStrictEqual({
      week: "1700000000",
      statuses: "2",
      logins: "1",
      registrations: "0",
    });
    expect(renderStatusSource({ id: "9", text: "hi", spoilerText: "" })).toStrictEqual({ id: "9", text: "hi", spoiler_text: "" });
    const account = { id: "5" } as MastodonAccount;
    expect(renderSuggestion(["friends_of_friends", "most_followed"], account)).toStrictEqual({
      source: "past_interactions",
      sources: ["friends_of_friends", "most_followed"],
      account,
    });
    expect(renderSuggestion([], account).source).toBe("global");
    const day = Date.UTC(2024, 0, 2);
    expect(JSON.stringify(renderAdminMeasure({ key: "k", unit: "bytes", total: 1536, previousTotal: 0, days: [{ day, value: 3 }] }))).toBe(
      '{"key":"k","unit":"bytes","total":"1536","human_value":"1.5 KB","previous_total":"0","data":[{"date":"2024-01-02T00:00:00Z","value":"3"}]}',
    );
    expect(Object.keys(renderAdminMeasure({ key: "k", unit: null, total: 1, previousTotal: null, days: [] }))).toEqual(["key", "unit", "total", "data"]);
  });

  it("render an app's credentials and a push subscription with every alert key", () => {
    const app = renderCredentialApplication(
      {
        id: "3",
        name: "App",
        website: null,
        redirectUris: "https://a.example/cb\nurn:ietf:wg:oauth:2.0:oob",
        scopes: "read push",
        clientId: "cid",
        clientSecret: "sec",
        ownerAccountId: null,
        createdAt: 0,
      },
      "vapid",
    );
    expect(Object.keys(app)).toEqual([
      "id",
      "name",
      "website",
      "scopes",
      "redirect_uri",
      "redirect_uris",
      "vapid_key",
      "client_id",
      "client_secret",
      "client_secret_expires_at",
    ]);
    expect(app.redirect_uris).toEqual(["https://a.example/cb", "urn:ietf:wg:oauth:2.0:oob"]);
    expect(app.redirect_uri).toBe("https://a.example/cb\nurn:ietf:wg:oauth:2.0:oob");
    const sub = renderPushSubscription(
      {
        id: "7",
        accessTokenId: "1",
        userId: "1",
        accountId: "1",
        endpoint: "https://push.example/x",
        keyP256dh: "k",
        keyAuth: "a",
        standard: true,
        alerts: { mention: true, "admin.sign_up": true },
        policy: "followed",
        createdAt: 0,
        updatedAt: 0,
        failingSince: null,
      },
      "server",
    );
    expect(Object.keys(sub)).toEqual(["id", "endpoint", "standard", "alerts", "policy", "server_key"]);
    expect(sub.alerts.mention).toBe(true);
    expect(sub.alerts["admin.sign_up"]).toBe(true);
    expect(sub.alerts.follow).toBe(false);
  });
});
