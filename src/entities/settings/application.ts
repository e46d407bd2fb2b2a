// Application and CredentialApplication entities (docs.joinmastodon.org/entities/Application): an OAuth client as
// GET /api/v1/apps/verify_credentials shows it, and with its credentials as POST /api/v1/apps answers once.
// `vapid_key` is the server's Web Push key (the same as in /api/v2/instance).
import type { oauthApplications } from "../../db/schema/index";

export type AppRow = typeof oauthApplications.$inferSelect;

export interface MastodonApplication {
  id: string;
  name: string;
  website: string | null;
  scopes: string[];
  /** The redirect URIs one a line (deprecated in Mastodon 4.3 for redirect_uris). */
  redirect_uri: string;
  redirect_uris: string[];
  vapid_key: string;
}

export interface MastodonCredentialApplication extends MastodonApplication {
  client_id: string;
  client_secret: string;
  /** 0: the secret does not expire. */
  client_secret_expires_at: 0;
}

/** The app's redirect URIs (stored one a line). */
export function appRedirectUris(app: AppRow): string[] {
  return app.redirectUris.split("\n").filter(Boolean);
}

export function renderApplication(app: AppRow, vapidKey: string): MastodonApplication {
  const uris = appRedirectUris(app);
  return {
    id: app.id,
    name: app.name,
    website: app.website,
    scopes: app.scopes.split(" ").filter(Boolean),
    redirect_uri: uris.join("\n"),
    redirect_uris: uris,
    vapid_key: vapidKey,
  };
}

export function renderCredentialApplication(app: AppRow, vapidKey: string): MastodonCredentialApplication {
  return { ...renderApplication(app, vapidKey), client_id: app.clientId, client_secret: app.clientSecret, client_secret_expires_at: 0 };
}
