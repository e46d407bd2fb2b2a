// What the browser tests share: Debian's chromium through playwright-core (a skip locally when it is missing, a
// failure in CI), the step guard, the JSON reader and screenshots under test-results/.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { root } from "../support/server.mjs";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
// Locally a missing browser is a skip; in CI (CI=true) it is a failure, so the check cannot silently vanish.
export const skip = !hasChromium && !process.env.CI ? `chromium not found at ${CHROMIUM} (apt-get install chromium)` : false;

/** Launches headless chromium (a fresh temporary profile); throws when CI is set and chromium is missing. */
export function launchChromium() {
  if (!hasChromium) throw new Error(`CI is set but chromium is missing at ${CHROMIUM}`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export function need(value, prereq) {
  if (!value) throw new Error(`blocked by an earlier step: ${prereq}`);
  return value;
}

/** The JSON body of `res`; throws with `what`, the status and the start of the body unless it is a 2xx. */
export async function json(res, what) {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** A full-page screenshot of `page` at test-results/`name`. */
export async function screenshot(page, name) {
  mkdirSync(join(root, "test-results"), { recursive: true });
  await page.screenshot({ path: join(root, "test-results", name), fullPage: true });
}

/**
 * A user signed up through the API as a client app does (an app, its client-credentials token, POST /api/v1/accounts);
 * returns the new user's access token.
 */
export async function signUpThroughApi(url, { clientName, username, email, password }) {
  const post = (path, body, token) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const app = await json(
    await post("/api/v1/apps", { client_name: clientName, redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" }),
    "POST /api/v1/apps",
  );
  const appToken = await json(
    await post("/oauth/token", { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" }),
    "client_credentials token",
  );
  const signedUp = await json(
    await post("/api/v1/accounts", { username, email, password, agreement: true, locale: "en" }, appToken.access_token),
    "POST /api/v1/accounts",
  );
  return need(signedUp.access_token, "sign-up token");
}
