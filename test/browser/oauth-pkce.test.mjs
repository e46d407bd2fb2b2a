// OAuth authorization code + PKCE in a real browser (Debian's chromium through playwright-core): sign-in page,
// consent page, redirect back to the app with code and state, token exchange with the verifier.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { json, launchChromium, need, screenshot, skip } from "./support.mjs";

const b64url = (buf) => buf.toString("base64url");
const EMAIL = "pkce-user@example.test";
const PASSWORD = "a long enough password 123";
const STATE = "xyz";
const SCOPE = "read write";

/** A stand-in for the client app's redirect endpoint: records the query of the first hit. */
async function startCallbackServer() {
  let resolveHit;
  const hit = new Promise((r) => (resolveHit = r));
  const srv = createServer((req, res) => {
    const u = new URL(req.url, "http://127.0.0.1");
    if (u.pathname === "/callback") resolveHit(Object.fromEntries(u.searchParams));
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>callback</title><p>Done.</p>");
  });
  // Port 0: the kernel picks a free port as it binds (no window for another process to take it first).
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address();
  return { redirectUri: `http://127.0.0.1:${port}/callback`, hit, close: () => new Promise((r) => srv.close(r)) };
}

describe("OAuth authorization code with PKCE in chromium", { skip }, () => {
  let server, callback, browser; // plain launch(): playwright gives chromium a fresh temporary profile
  const s = {};
  const verifier = b64url(randomBytes(48)); // 64 chars, within RFC 7636's 43..128
  const challenge = b64url(createHash("sha256").update(verifier).digest());

  before(async () => {
    [server, callback] = await Promise.all([startTern(), startCallbackServer()]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await callback?.close();
    await server?.stop();
  });

  test("registers the app and a user through the API", async () => {
    const app = await json(
      await fetch(`${server.url}/api/v1/apps`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "PKCE app", redirect_uris: callback.redirectUri, scopes: SCOPE }),
      }),
      "POST /api/v1/apps",
    );
    assert.ok(app.client_id && app.client_secret);
    s.app = app;

    const appToken = await json(
      await fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: app.client_id,
          client_secret: app.client_secret,
          scope: "write",
        }),
      }),
      "POST /oauth/token (client_credentials)",
    );
    const form = new FormData();
    for (const [k, v] of Object.entries({ username: "pkceuser", email: EMAIL, password: PASSWORD, agreement: "true", locale: "en" })) {
      form.append(k, v);
    }
    const signup = await json(
      await fetch(`${server.url}/api/v1/accounts`, {
        method: "POST",
        headers: { authorization: `Bearer ${appToken.access_token}` },
        body: form,
      }),
      "POST /api/v1/accounts",
    );
    assert.ok(signup.access_token);
    s.user = true;
  });

  test("signs in, approves on the consent page and lands on the callback with code and state", async () => {
    const app = need(s.user && s.app, "app and user registration");
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const documents = [];
    page.on("response", (r) => {
      if (r.request().resourceType() === "document") documents.push(r);
    });
    const authorize = new URL("/oauth/authorize", server.url);
    authorize.search = new URLSearchParams({
      client_id: app.client_id,
      redirect_uri: callback.redirectUri,
      response_type: "code",
      scope: SCOPE,
      state: STATE,
      code_challenge: challenge,
      code_challenge_method: "S256",
    }).toString();

    const first = await page.goto(authorize.href);
    assert.ok(first && first.status() < 400, `GET /oauth/authorize answered ${first?.status()}`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();

    const approve = page.locator('button[name="decision"][value="approve"]');
    await approve.waitFor({ state: "visible" });
    assert.match(await approve.textContent(), /Authorize/);
    assert.match(await page.content(), /PKCE app/, "the consent page names the app");
    await screenshot(page, "oauth-consent.png");

    // Every page Tern served on the way (sign-in and consent), not only the first.
    s.pagesCsp = [];
    for (const r of documents) {
      if (!r.url().startsWith(server.url) || r.status() !== 200) continue;
      s.pagesCsp.push([new URL(r.url()).pathname, (await r.allHeaders())["content-security-policy"] ?? ""]);
    }
    const hit = Promise.race([callback.hit, new Promise((_, rej) => setTimeout(() => rej(new Error("no redirect to the callback within 15 s")), 15_000))]);
    await approve.click();
    const q = await hit;
    assert.equal(q.state, STATE, "state is passed back unchanged");
    assert.ok(q.code, "an authorization code");
    assert.equal(q.error, undefined);
    await page.waitForURL((u) => u.href.startsWith(callback.redirectUri));
    s.code = q.code;
    await page.close();
  });

  test("the sign-in and consent pages forbid framing (CSP frame-ancestors 'none')", async () => {
    const pages = need(s.pagesCsp?.length && s.pagesCsp, "browser flow reaching the consent page");
    assert.ok(
      pages.some(([path]) => path === "/oauth/authorize"),
      `the authorize page was seen (${pages.map(([p]) => p)})`,
    );
    for (const [path, csp] of pages) assert.match(csp, /frame-ancestors 'none'/, `CSP of ${path}: ${csp || "(none)"}`);
  });

  const exchange = (code, codeVerifier) =>
    fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: callback.redirectUri,
        client_id: s.app.client_id,
        client_secret: s.app.client_secret,
        code_verifier: codeVerifier,
      }),
    });

  test("exchanges the code with the PKCE verifier for a user token", async () => {
    const code = need(s.code, "authorization code");
    const token = await json(await exchange(code, verifier), "POST /oauth/token (authorization_code)");
    assert.ok(token.access_token);
    assert.match(token.token_type, /^bearer$/i);
    assert.equal(token.scope, SCOPE);
    s.token = token.access_token;
  });

  test("the token works: GET /api/v1/apps/verify_credentials", async () => {
    const token = need(s.token, "token exchange");
    const app = await json(
      await fetch(`${server.url}/api/v1/apps/verify_credentials`, { headers: { authorization: `Bearer ${token}` } }),
      "GET /api/v1/apps/verify_credentials",
    );
    assert.equal(app.name, "PKCE app");
  });

  test("the token is the user's: GET /api/v1/accounts/verify_credentials", async () => {
    const token = need(s.token, "token exchange");
    const me = await json(
      await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${token}` } }),
      "GET /api/v1/accounts/verify_credentials",
    );
    assert.equal(me.username, "pkceuser");
  });

  test("the code cannot be used twice; reuse revokes the token it issued (security B7)", async () => {
    const code = need(s.token && s.code, "token exchange");
    const res = await exchange(code, verifier);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "invalid_grant");
    const after = await fetch(`${server.url}/api/v1/apps/verify_credentials`, {
      headers: { authorization: `Bearer ${s.token}` },
    });
    assert.equal(after.status, 401, "the token from the first exchange no longer works");
  });
});
