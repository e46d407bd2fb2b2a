// The account settings pages in a real browser (Debian's chromium through playwright-core): a user signs in, changes
// the password, turns on two-factor authentication (the code computed here, RFC 6238), signs out and signs back in
// with the new password and a code; the same code again is refused as already used. Plain forms: no client-side
// JavaScript is involved.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { launchChromium, need, screenshot, signUpThroughApi, skip } from "./support.mjs";

const EMAIL = "settings-user@example.test";
const PASSWORD = "a long enough password 123";
const NEW_PASSWORD = "an even longer password 456";

function base32Decode(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of text.replace(/[\s=]/g, "").toUpperCase()) {
    value = ((value << 5) | alphabet.indexOf(ch)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 TOTP, SHA-1, 6 digits, 30 s, at `ms`. */
function totp(secret, ms = Date.now()) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 30_000)));
  const mac = createHmac("sha1", base32Decode(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

describe("account settings in chromium", { skip }, () => {
  let server, browser, page;
  const s = {};

  before(async () => {
    server = await startTern();
    browser = await launchChromium();
    page = await browser.newPage({ javaScriptEnabled: false });
    page.setDefaultTimeout(15_000);
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await server?.stop();
  });

  test("a user signs up through the API", async () => {
    s.apiToken = await signUpThroughApi(server.url, { clientName: "Settings app", username: "settingsuser", email: EMAIL, password: PASSWORD });
  });

  test("signs in and reaches the settings from the front page", async () => {
    need(s.apiToken, "sign-up");
    await page.goto(`${server.url}/auth/sign_in`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("link", { name: "Settings", exact: true }).click();
    await page.waitForURL(`${server.url}/settings/profile`);
    assert.match(await page.locator("h1").textContent(), /Profile/);
    s.signedIn = true;
  });

  test("changes the password: the API token of the sign-up is revoked, this session stays", async () => {
    need(s.signedIn, "sign-in");
    await page.getByRole("link", { name: "E-mail and password", exact: true }).click();
    await page.locator("#current_password").fill(PASSWORD);
    await page.locator("#password").fill(NEW_PASSWORD);
    await page.locator("#password_confirmation").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password", exact: true }).click();
    await page.waitForURL(`${server.url}/auth/edit`);
    assert.match(await page.locator(".notice").textContent(), /Your password was changed/);
    const res = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${s.apiToken}` } });
    assert.equal(res.status, 401);
    s.changed = true;
  });

  test("turns on two-factor authentication with a computed code and gets 10 recovery codes", async () => {
    need(s.changed, "password change");
    await page.getByRole("link", { name: "Two-factor authentication", exact: true }).click();
    await page.getByRole("button", { name: "Set up", exact: true }).click();
    await page.waitForURL(`${server.url}/settings/otp_authentication`);
    const secret = (await page.locator("#otp-secret").textContent()).trim();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match(await page.locator("#otp-uri").textContent(), /^otpauth:\/\/totp\//);
    await page.locator("#otp_attempt").fill(totp(secret));
    await page.getByRole("button", { name: "Enable", exact: true }).click();
    await page.locator("#recovery-codes").waitFor();
    assert.equal(await page.locator("#recovery-codes li").count(), 10);
    await screenshot(page, "settings-recovery-codes.png");
    await page.getByRole("link", { name: "Done", exact: true }).click();
    assert.match(await page.locator("#otp-status").textContent(), /is on/);
    s.secret = secret;
  });

  test("signs out and back in: the new password, then the code", async () => {
    const secret = need(s.secret, "two-factor set-up");
    await page.goto(`${server.url}/`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await page.goto(`${server.url}/auth/sign_in?return_to=/settings/otp_authentication`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const code = page.locator("#otp_attempt");
    await code.waitFor();
    // The code of the step that enabled two-factor was used; the next step's code is within the accepted window.
    const used = totp(secret, Date.now() + 30_000);
    await code.fill(used);
    await page.getByRole("button", { name: "Verify", exact: true }).click();
    await page.waitForURL(`${server.url}/settings/otp_authentication`);
    assert.match(await page.locator("#otp-status").textContent(), /is on/);
    s.used = used;
  });

  test("a code used once is refused the next time, saying why", async () => {
    const used = need(s.used, "sign-in with a code");
    await page.goto(`${server.url}/`);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await page.goto(`${server.url}/auth/sign_in`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.locator("#otp_attempt").fill(used);
    await page.getByRole("button", { name: "Verify", exact: true }).click();
    assert.match(await page.locator(".error").textContent(), /This code was already used: each code works once/);
    await screenshot(page, "settings-otp-used.png");
  });
});
