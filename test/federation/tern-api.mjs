// A small REST client for Tern's Mastodon API (plain fetch: the federation suite asserts on raw entities), and
// sign-up of users through the public API the way an app does it.
import assert from "node:assert/strict";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class HttpError extends Error {
  constructor(method, path, status, body) {
    super(`${method} ${path}: HTTP ${status} ${body.slice(0, 300)}`);
    this.status = status;
    this.body = body;
  }
}

/** api(base, token).get(path, query) / .post(path, body) / .patch / .delete → parsed JSON; throws HttpError. */
export function api(base, token) {
  const call = async (method, path, { query, body, allow = [] } = {}) => {
    const url = new URL(path, base);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, x);
      else if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers = { accept: "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    if (!res.ok && !allow.includes(res.status)) throw new HttpError(method, url.pathname + url.search, res.status, text);
    const json = text ? JSON.parse(text) : null;
    return allow.length ? { status: res.status, json } : json;
  };
  return {
    get: (path, query, opts = {}) => call("GET", path, { query, ...opts }),
    post: (path, body = {}, opts = {}) => call("POST", path, { body, ...opts }),
    patch: (path, body = {}, opts = {}) => call("PATCH", path, { body, ...opts }),
    delete: (path, opts = {}) => call("DELETE", path, opts),
  };
}

/** Registers an app, takes an app token, signs `usernames` up; returns { username: { token, id, api } }. */
export async function signUp(base, usernames) {
  const anon = api(base);
  const app = await anon.post("/api/v1/apps", {
    client_name: "Tern federation suite",
    redirect_uris: "urn:ietf:wg:oauth:2.0:oob",
    scopes: "read write follow push",
  });
  const tok = await anon.post("/oauth/token", {
    grant_type: "client_credentials",
    client_id: app.client_id,
    client_secret: app.client_secret,
    redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
    scope: "read write follow push",
  });
  const appApi = api(base, tok.access_token);
  const users = {};
  for (const username of usernames) {
    const t = await appApi.post("/api/v1/accounts", {
      username,
      email: `${username}@example.test`,
      password: "correct horse battery staple",
      agreement: true,
      locale: "en",
    });
    const userApi = api(base, t.access_token);
    const me = await userApi.get("/api/v1/accounts/verify_credentials");
    users[username] = { username, token: t.access_token, id: me.id, api: userApi };
  }
  return users;
}

/**
 * Polls `fn` until it returns a truthy value; throws with `what` (and the last value) after `timeoutMs`. Tern's state
 * has no event a client could wait on, so this asks again every `intervalMs`. `timeoutMs` only bounds a failure: it
 * leaves room for one of Tern's queue retries (a failed JOBS message comes back after 10 s, a delivery after 16 s).
 */
export async function poll(what, fn, { timeoutMs = 45_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  let lastError;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      lastError = undefined;
      if (last) return last;
    } catch (e) {
      lastError = e;
    }
    await sleep(intervalMs);
  }
  const detail = lastError ? `last error: ${lastError.message}` : `last value: ${JSON.stringify(last)?.slice(0, 500)}`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${detail})`);
}

/**
 * The first owner, made on the /setup page as a person does it (SETUP_TOKEN=e2e-setup, which startTern sets), then a
 * password-grant token with the admin scopes; returns an api client with that token.
 */
export async function setUpOwner(base, { username = "owner", password = "correct horse battery staple" } = {}) {
  const page = await fetch(`${base}/setup?token=e2e-setup`);
  assert.equal(page.status, 200, "GET /setup answers the form");
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  assert.ok(csrf, "the setup form carries a csrf token");
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const email = `${username}@example.test`;
  const res = await fetch(`${base}/setup`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrf, token: "e2e-setup", username, email, password }),
  });
  assert.equal(res.status, 303, `POST /setup creates the owner (${res.status})`);
  const anon = api(base);
  const scopes = "read write admin:read admin:write";
  const app = await anon.post("/api/v1/apps", { client_name: "Tern federation suite (owner)", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes });
  const tok = await anon.post("/oauth/token", {
    grant_type: "password",
    client_id: app.client_id,
    client_secret: app.client_secret,
    redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
    username: email,
    password,
    scope: scopes,
  });
  return api(base, tok.access_token);
}
