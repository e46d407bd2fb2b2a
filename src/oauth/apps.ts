// OAuth applications: registration (POST /api/v1/apps), lookup and client authentication (the Application entity is
// src/entities/settings/application.ts). Redirect URIs follow Doorkeeper's validator with Mastodon's `forbid_redirect_uri` (B6).
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { oauthApplications } from "../db/schema/index";
import type { AppRow } from "../entities/settings/application";
import { randomToken, safeEqual } from "../lib/security/crypto";
import { ApiError } from "../lib/http/errors";
import { snowflake } from "../lib/text/ids";
import { parseScopes } from "./scopes";
import { oauthError } from "./errors";

export type { AppRow };

export const OOB_URI = "urn:ietf:wg:oauth:2.0:oob";
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "vbscript:"]);
const MAX_URI = 2000;
const MAX_URIS = 20;

type Details = Record<string, { error: string; description: string }[]>;

const LABELS: Record<string, string> = { name: "Application name", redirect_uri: "Redirect URI", scopes: "Scopes", website: "Website" };

function fail(details: Details): ApiError {
  const msg = Object.entries(details)
    .flatMap(([k, v]) => v.slice(0, 1).map((d) => `${LABELS[k] ?? k} ${d.description}`)) // each field's first error
    .join(", ");
  return new ApiError(422, `Validation failed: ${msg}`, { details });
}

/** Why a redirect URI is refused, or null when it is acceptable. */
export function redirectUriProblem(uri: string): string | null {
  if (uri === OOB_URI) return null;
  if (uri.length > MAX_URI) return `is too long (maximum is ${MAX_URI} characters)`;
  if (/[\s\u0000-\u001f\u007f]/.test(uri)) return "must be an absolute URI.";
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return "must be an absolute URI.";
  }
  // A scheme and something after it: `https://x/cb` or a custom scheme like `com.tapbots.Ivory.1:/request_token`.
  if (!/^[a-z][a-z0-9+.-]*:./i.test(uri)) return "must be an absolute URI.";
  if (FORBIDDEN_SCHEMES.has(u.protocol.toLowerCase())) return "is forbidden by the server.";
  if (u.hash || uri.includes("#")) return "cannot contain a fragment.";
  if ((u.protocol === "http:" || u.protocol === "https:") && !u.hostname) return "must be an absolute URI.";
  return null;
}

export function splitRedirectUris(raw: unknown): string[] | null {
  if (raw === undefined || raw === null) return [];
  const parts = Array.isArray(raw) ? raw : typeof raw === "object" ? Object.values(raw as object) : [raw];
  const out: string[] = [];
  for (const p of parts) {
    if (typeof p !== "string") return null;
    for (const line of p.split(/\r?\n/)) {
      const t = line.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

export interface AppInput {
  client_name?: unknown;
  redirect_uris?: unknown;
  scopes?: unknown;
  website?: unknown;
}

export async function createApp(db: DB, input: AppInput, ownerAccountId: string | null = null): Promise<AppRow> {
  const details: Details = {};
  const name = typeof input.client_name === "string" ? input.client_name.trim() : "";
  if (input.client_name !== undefined && typeof input.client_name !== "string") details.name = [{ error: "ERR_INVALID", description: "is invalid" }];
  else if (!name) details.name = [{ error: "ERR_BLANK", description: "can't be blank" }];
  else if (name.length > 60) details.name = [{ error: "ERR_TOO_LONG", description: "is too long (maximum is 60 characters)" }];

  const uris = splitRedirectUris(input.redirect_uris);
  if (!uris) details.redirect_uri = [{ error: "ERR_INVALID", description: "is invalid" }];
  else if (!uris.length) details.redirect_uri = [{ error: "ERR_BLANK", description: "can't be blank" }];
  else if (uris.length > MAX_URIS) details.redirect_uri = [{ error: "ERR_INVALID", description: `is too long (maximum is ${MAX_URIS} URIs)` }];
  else {
    for (const u of uris) {
      const problem = redirectUriProblem(u);
      if (problem) {
        details.redirect_uri = [{ error: "ERR_INVALID", description: problem }];
        break;
      }
    }
  }

  let scopes: string[] | null = null;
  if (input.scopes !== undefined && typeof input.scopes !== "string")
    details.scopes = [{ error: "ERR_INVALID", description: "doesn't match configured on the server." }];
  else {
    scopes = parseScopes(input.scopes as string | undefined);
    if (!scopes) details.scopes = [{ error: "ERR_INVALID", description: "doesn't match configured on the server." }];
  }

  let website: string | null = null;
  if (input.website !== undefined && input.website !== null && input.website !== "") {
    if (typeof input.website !== "string" || input.website.length > 2000 || !isHttpUrl(input.website)) {
      details.website = [{ error: "ERR_INVALID", description: "is invalid" }];
    } else website = input.website;
  }
  if (Object.keys(details).length) throw fail(details);

  const now = Date.now();
  const row: AppRow = {
    id: snowflake(now),
    name,
    website,
    redirectUris: uris!.join("\n"),
    scopes: scopes!.join(" "),
    clientId: randomToken(32),
    clientSecret: randomToken(32),
    ownerAccountId,
    createdAt: now,
  };
  await db.insert(oauthApplications).values(row);
  return row;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && !!u.hostname;
  } catch {
    return false;
  }
}

export async function findAppByClientId(db: DB, clientId: string): Promise<AppRow | null> {
  if (!clientId || clientId.length > 200) return null;
  const rows = await db.select().from(oauthApplications).where(eq(oauthApplications.clientId, clientId)).limit(1);
  return rows[0] ?? null;
}

export async function findAppById(db: DB, id: string): Promise<AppRow | null> {
  const rows = await db.select().from(oauthApplications).where(eq(oauthApplications.id, id)).limit(1);
  return rows[0] ?? null;
}

export interface ClientCredentials {
  clientId: string | null;
  clientSecret: string | null;
}

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1, form-encoded parts) or from the body. */
export function readClientCredentials(authorization: string | undefined, params: Record<string, unknown>): ClientCredentials {
  const m = authorization ? /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(authorization) : null;
  if (m) {
    try {
      const decoded = atob(m[1] ?? ""); // the group always participates
      const i = decoded.indexOf(":");
      if (i > 0) {
        const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
        return { clientId: dec(decoded.slice(0, i)), clientSecret: dec(decoded.slice(i + 1)) };
      }
    } catch {
      return { clientId: null, clientSecret: null };
    }
  }
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return { clientId: str(params.client_id), clientSecret: str(params.client_secret) };
}

/** The authenticated client, or `invalid_client` (401). */
export async function authenticateClient(db: DB, creds: ClientCredentials): Promise<AppRow> {
  if (!creds.clientId || !creds.clientSecret) throw oauthError("invalid_client");
  const app = await findAppByClientId(db, creds.clientId);
  if (!app || !safeEqual(app.clientSecret, creds.clientSecret)) throw oauthError("invalid_client");
  return app;
}
