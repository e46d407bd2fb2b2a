// "Forgot your password?" end to end in a real browser (Debian's chromium through playwright-core, JavaScript off):
// the sign-in page's link, the form, the mail, the link in it, the new password, signing in with it, and the link
// refused the second time. The mail is read where `wrangler dev` keeps what the EMAIL binding sent: its local
// explorer's list of sent e-mail (/cdn-cgi/local/explorer/api/local/email/sending), which holds the message as given
// to `env.EMAIL.send()`.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { json, launchChromium, need, screenshot, signUpThroughApi, skip } from "./support.mjs";

/** Submits the page's form and waits for the page it leads to to load (its content is read right after). */
const submit = (page) => Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("button[type=submit]")]);
const EMAIL = "forgetful@example.test";
const PASSWORD = "a long enough password 123";
const NEW_PASSWORD = "a fresh password nobody knows";
const SENT = "/cdn-cgi/local/explorer/api/local/email/sending";

/** The mails wrangler dev captured for `to`, newest first, each with its text (waits until `count` are there). */
async function capturedMail(url, to, count = 1, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const list = await json(await fetch(`${url}${SENT}?per_page=100`), "list sent e-mail");
    const mine = list.result.filter((m) => (Array.isArray(m.to) ? m.to : [m.to]).includes(to));
    if (mine.length >= count) {
      const out = [];
      for (const m of mine) {
        const detail = await json(await fetch(`${url}${SENT}?email_id=${encodeURIComponent(m.messageId)}`), "one sent e-mail");
        out.push({ ...m, ...detail.result });
      }
      return out;
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} after ${timeoutMs} ms: ${JSON.stringify(list.result).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("forgot password in chromium", { skip }, () => {
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
    s.token = await signUpThroughApi(server.url, { clientName: "Forgetful app", username: "forgetful", email: EMAIL, password: PASSWORD });
    const me = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(me.status, 200);
  });

  test("the sign-in page leads to the form, which answers the same for any address", async () => {
    need(s.token, "sign-up");
    await page.goto(`${server.url}/auth/sign_in`);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("#forgot-password")]);
    assert.equal(new URL(page.url()).pathname, "/auth/password/new");
    await page.fill("#email", "nobody-here@example.test");
    await submit(page);
    const unknownAnswer = await page.textContent("#reset-sent");
    await page.goto(`${server.url}/auth/password/new`);
    await page.fill("#email", EMAIL);
    await submit(page);
    assert.equal(await page.textContent("#reset-sent"), unknownAnswer);
    await screenshot(page, "forgot-password-sent.png");
    s.asked = true;
  });

  test("the mail arrives with a plain-text part naming the instance and a link to it", async () => {
    need(s.asked, "asking for the link");
    const [mail] = await capturedMail(server.url, EMAIL);
    assert.match(mail.subject, /Reset your password \(Tern\)/);
    const text = mail.text ?? mail.raw ?? "";
    assert.ok(text.includes("Tern"), text);
    const link = /http:\/\/127\.0\.0\.1:\d+\/auth\/password\/edit\?reset_password_token=\S+/.exec(text)?.[0];
    assert.ok(link, `no reset link in:\n${text}`);
    assert.ok(link.startsWith(server.url), link);
    s.link = link;
    // Nobody else got a mail: the unknown address had no account.
    const all = await json(await fetch(`${server.url}${SENT}?per_page=100`), "list sent e-mail");
    assert.equal(all.result.length, 1);
  });

  test("the link sets a new password, which signs in; the old token and password no longer work", async () => {
    need(s.link, "the mailed link");
    await page.goto(s.link);
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password_confirmation", NEW_PASSWORD);
    await screenshot(page, "forgot-password-new.png");
    await submit(page);
    assert.equal(new URL(page.url()).pathname, "/auth/sign_in");
    assert.match(await page.content(), /Your password was changed/);
    const revoked = await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(revoked.status, 401);
    await page.fill("#email", EMAIL);
    await page.fill("#password", PASSWORD);
    await submit(page);
    assert.match(await page.content(), /Invalid e-mail address or password/);
    await page.fill("#email", EMAIL);
    await page.fill("#password", NEW_PASSWORD);
    await submit(page);
    assert.equal(new URL(page.url()).pathname, "/");
    assert.match(await page.content(), /forgetful/);
    s.reset = true;
  });

  test("the link works once", async () => {
    need(s.reset, "the reset");
    const res = await page.goto(s.link);
    assert.equal(res.status(), 422);
    assert.match(await page.textContent("#bad-link"), /invalid, was already used, or has expired/);
    await screenshot(page, "forgot-password-used-link.png");
  });
});
