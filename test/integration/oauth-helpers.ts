// Helpers for the OAuth and HTML page tests: a tiny cookie jar, form posts with redirect: "manual", hidden-field
// scraping, PKCE values and a whole browser-style authorization flow.
import { SELF } from "cloudflare:test";
import { ORIGIN } from "./helpers";

export const PASSWORD = "correct horse battery staple";

export class Jar {
  cookies = new Map<string, string>();
  absorb(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (!value || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

export interface WebOpts {
  method?: string;
  jar?: Jar;
  form?: Record<string, string>;
  json?: unknown;
  headers?: Record<string, string>;
  ip?: string;
}

export async function web(path: string, o: WebOpts = {}): Promise<Response & { text_: string }> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.jar?.cookies.size) headers.cookie = o.jar.header();
  if (o.ip) headers["cf-connecting-ip"] = o.ip;
  let body: string | undefined;
  if (o.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(o.form).toString();
  } else if (o.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.json);
  }
  const res = await SELF.fetch(path.startsWith("http") ? path : `${ORIGIN}${path}`, {
    method: o.method ?? (body !== undefined ? "POST" : "GET"),
    headers,
    body,
    redirect: "manual",
  });
  o.jar?.absorb(res);
  const text_ = await res.text();
  return Object.assign(res, { text_ });
}

export function hidden(html: string, name: string): string | null {
  const re = new RegExp(`<input[^>]*name="${name}"[^>]*>`);
  const tag = re.exec(html)?.[0];
  if (!tag) return null;
  const v = /value="([^"]*)"/.exec(tag);
  return v ? decodeEntities(v[1]) : "";
}

export function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

export async function pkce() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const verifier = b64url(bytes);
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

function b64url(b: Uint8Array): string {
  return btoa(String.fromCharCode(...b))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export interface RegisteredApp {
  id: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
}

export async function registerApp(redirectUris = "https://app.example/cb", scopes = "read write follow push", name = "Flow App"): Promise<RegisteredApp> {
  const res = await web("/api/v1/apps", { json: { client_name: name, redirect_uris: redirectUris, scopes } });
  if (res.status !== 200) throw new Error(`app registration failed: ${res.status} ${res.text_}`);
  return JSON.parse(res.text_);
}

/** Signs in through the standalone form; returns the jar holding the session cookie. */
export async function signIn(email: string, password = PASSWORD, ip = "198.51.100.10", jar = new Jar()) {
  const form = await web("/auth/sign_in", { jar, ip });
  const csrf = hidden(form.text_, "csrf")!;
  const res = await web("/auth/sign_in", { jar, ip, form: { email, password, csrf, return_to: "/" }, headers: { origin: ORIGIN } });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return jar;
}

export function authorizeUrl(app: RegisteredApp, extra: Record<string, string> = {}) {
  const q = new URLSearchParams({ client_id: app.client_id, redirect_uri: app.redirect_uri, response_type: "code", scope: "read write", ...extra });
  return `/oauth/authorize?${q}`;
}

/** GET authorize with a session → consent page → approve; returns the Location of the redirect. */
export async function approve(jar: Jar, app: RegisteredApp, extra: Record<string, string> = {}) {
  const consent = await web(authorizeUrl(app, extra), { jar });
  if (consent.status !== 200 || !consent.text_.includes('value="approve"'))
    throw new Error(`no consent page: ${consent.status} ${consent.text_.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const n of ["client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "response_type", "response_mode", "csrf"]) {
    fields[n] = hidden(consent.text_, n) ?? "";
  }
  const res = await web("/oauth/authorize", { jar, form: { ...fields, decision: "approve" }, headers: { origin: ORIGIN } });
  return res;
}

export async function tokenRequest(body: Record<string, string>, o: { form?: boolean; headers?: Record<string, string>; ip?: string } = {}) {
  const res = await web("/oauth/token", o.form === false ? { json: body, headers: o.headers, ip: o.ip } : { form: body, headers: o.headers, ip: o.ip });
  return { status: res.status, body: JSON.parse(res.text_), headers: res.headers };
}

export function codeFrom(location: string | null): string {
  const u = new URL(location!);
  return u.searchParams.get("code")!;
}

/** The password grant (scope read) for the login `username` (an e-mail address) with PASSWORD, `extra` fields on top. */
export function passwordGrant(app: RegisteredApp, username: string, extra: Record<string, string> = {}, o: { ip?: string } = {}) {
  return tokenRequest(
    { grant_type: "password", client_id: app.client_id, client_secret: app.client_secret, username, password: PASSWORD, scope: "read", ...extra },
    o,
  );
}
