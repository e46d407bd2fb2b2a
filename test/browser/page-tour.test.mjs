// Every settings and admin page as a new admin meets it, in a real browser (Debian's chromium through playwright-core,
// JavaScript off): each settings page carries the one settings navigation; a refused preferences form keeps what was
// typed; Apps and sessions shows when an app last used its token; an import refuses a malformed file whole and lists
// each failed row with why; the archive link reads as a date; the roles page counts the owner; a report's Suspend asks
// first; the audit log names accounts by handle. Each page is screenshotted under test-results/tour-*.png.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { json, launchChromium, need, screenshot, skip } from "./support.mjs";

const OWNER = { username: "boss", email: "boss@example.test", password: "a long enough password 123" };
const SETTINGS = [
  "/settings/profile",
  "/settings/preferences",
  "/auth/edit",
  "/settings/otp_authentication",
  "/oauth/authorized_applications",
  "/settings/exports",
  "/settings/imports",
  "/settings/migration",
  "/settings/delete",
];
const ADMIN = [
  "/admin",
  "/admin/dashboard",
  "/admin/pending",
  "/admin/domains",
  "/admin/relays",
  "/admin/emojis",
  "/admin/announcements",
  "/admin/rules",
  "/admin/settings",
];
const shot = (path) => `tour${path.replaceAll("/", "-")}.png`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe("every page as a new admin meets it (chromium, no JavaScript)", { skip }, () => {
  let server, browser, page;
  const s = {};
  const api = (path, token, init = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { ...(init.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const form = (body) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body) });
  const postJson = (body) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  /** Reloads `path` until `ready` holds of the page (a queue job finishing), for up to 30 s. */
  async function until(path, ready) {
    for (let i = 0; i < 60; i++) {
      await page.goto(`${server.url}${path}`);
      if (await ready()) return;
      await sleep(500);
    }
    assert.fail(`${path} never got ready`);
  }

  before(async () => {
    server = await startTern();
    browser = await launchChromium();
    const context = await browser.newContext({ javaScriptEnabled: false });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await server?.stop();
  });

  test("the owner is created on the setup page; an app, a troll and a report through the API", async () => {
    await page.goto(`${server.url}/setup?token=e2e-setup`);
    await screenshot(page, "tour-setup.png");
    await page.locator("#username").fill(OWNER.username);
    await page.locator("#email").fill(OWNER.email);
    await page.locator("#password").fill(OWNER.password);
    await page.getByRole("button", { name: "Create owner" }).click();
    await page.waitForURL(`${server.url}/`);
    await screenshot(page, "tour-front-page.png");
    const app = await json(
      await api("/api/v1/apps", null, postJson({ client_name: "Tour app", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" })),
      "POST /api/v1/apps",
    );
    const appToken = await json(
      await api(
        "/oauth/token",
        null,
        form({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" }),
      ),
      "client_credentials",
    );
    const signUp = async (username) =>
      (
        await json(
          await api(
            "/api/v1/accounts",
            appToken.access_token,
            postJson({ username, email: `${username}@example.test`, password: "another long password 1", agreement: true, locale: "en" }),
          ),
          `sign-up of ${username}`,
        )
      ).access_token;
    const [reporter, troll] = [await signUp("reporter"), await signUp("troll")];
    const trollAccount = await json(await api("/api/v1/accounts/verify_credentials", troll), "troll verify_credentials");
    const status = await json(await api("/api/v1/statuses", troll, postJson({ status: "buy cheap pills" })), "troll's status");
    const report = await json(
      await api("/api/v1/reports", reporter, postJson({ account_id: trollAccount.id, status_ids: [status.id], comment: "spam", category: "spam" })),
      "POST /api/v1/reports",
    );
    // The owner's app, used once: Apps and sessions shows when.
    const owner = await json(
      await api(
        "/oauth/token",
        null,
        form({
          grant_type: "password",
          client_id: app.client_id,
          client_secret: app.client_secret,
          username: OWNER.email,
          password: OWNER.password,
          scope: "read write",
        }),
      ),
      "password grant",
    );
    await json(await api("/api/v1/accounts/verify_credentials", owner.access_token), "owner verify_credentials");
    s.reportId = report.id;
  });

  test("every settings page carries the settings navigation, its own entry marked", async () => {
    need(s.reportId, "setup");
    for (const path of SETTINGS) {
      await page.goto(`${server.url}${path}`);
      const nav = page.getByRole("navigation", { name: "Settings" });
      assert.equal(await nav.getByRole("link").count(), 9, path);
      assert.equal(await nav.locator('a[aria-current="page"]').getAttribute("href"), path);
      await screenshot(page, shot(path));
    }
    // The aliases page belongs to Account migration.
    await page.goto(`${server.url}/settings/aliases`);
    assert.equal(await page.getByRole("navigation", { name: "Settings" }).locator('a[aria-current="page"]').getAttribute("href"), "/settings/migration");
    await screenshot(page, shot("/settings/aliases"));
  });

  test("a refused preferences form keeps the value typed and says why", async () => {
    need(s.reportId, "setup");
    await page.goto(`${server.url}/settings/preferences`);
    await page.locator("#privacy").selectOption("unlisted");
    await page.locator("#language").fill("klingon!");
    await page.getByRole("button", { name: "Save changes" }).click();
    assert.match(await page.locator(".error").textContent(), /“klingon!” is not a language code/);
    assert.equal(await page.locator("#language").inputValue(), "klingon!");
    assert.equal(await page.locator("#privacy").inputValue(), "unlisted");
    await screenshot(page, "tour-preferences-refused.png");
  });

  test("Apps and sessions shows when the app last used its token", async () => {
    need(s.reportId, "setup");
    await page.goto(`${server.url}/oauth/authorized_applications`);
    const row = page.locator("#authorized-apps tr", { hasText: "Tour app" });
    const lastUsed = await row.locator("td").nth(2).textContent();
    assert.match(lastUsed, /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);
  });

  test("an import refuses a malformed file whole, and lists each failed row of a good one with why", async () => {
    need(s.reportId, "setup");
    await page.goto(`${server.url}/settings/imports`);
    await page.locator("#type").selectOption("blocking");
    await page.locator("#data").setInputFiles({ name: "broken.csv", mimeType: "text/csv", buffer: Buffer.from('troll\n"reporter\nnobody\n') });
    await page.getByRole("button", { name: "Upload" }).click();
    assert.match(await page.locator(".error").textContent(), /not a valid CSV file \(the quote opened on line 2 is never closed\)/);
    assert.equal(await page.locator("[data-import]").count(), 0);
    await screenshot(page, "tour-import-refused.png");

    await page.locator("#type").selectOption("blocking");
    await page
      .locator("#data")
      .setInputFiles({ name: "blocks.csv", mimeType: "text/csv", buffer: Buffer.from("Account address\ntroll\nnobody\nnot an address\n") });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.waitForURL(`${server.url}/settings/imports`);
    await until("/settings/imports", async () => (await page.locator("[data-import] td").nth(2).textContent()) === "Finished");
    const failed = page.locator("[data-failures] tr");
    assert.deepEqual(await failed.allTextContents(), [
      "RowEntryWhy",
      "3nobodyno such account on this server",
      "4not an addressnot an account address (user@domain)",
    ]);
    await screenshot(page, "tour-import-failures.png");
  });

  test("the archive link reads as a date", async () => {
    need(s.reportId, "setup");
    await page.goto(`${server.url}/settings/exports`);
    await page.getByRole("button", { name: "Request your archive" }).click();
    await until("/settings/exports", async () => (await page.locator("#archive-state a").count()) > 0);
    assert.match(await page.locator("#archive-state").textContent(), /^Download your archive of \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);
    await screenshot(page, "tour-exports-ready.png");
  });

  test("every admin page carries the admin navigation; the roles page counts the owner", async () => {
    need(s.reportId, "setup");
    // Something on each list, through its form.
    await page.goto(`${server.url}/admin/rules`);
    await page.locator('form[action="/admin/rules"] input[name="text"]').fill("Be kind");
    await page.getByRole("button", { name: "Add rule" }).click();
    await page.goto(`${server.url}/admin/announcements`);
    await page.locator('form[action="/admin/announcements"] textarea[name="text"]').fill("Maintenance tonight at 22:00 UTC.");
    await page.getByRole("button", { name: "Create" }).click();
    await page.goto(`${server.url}/admin/domains`);
    await page.locator("#block-domain").fill("noisy.example");
    await page.getByRole("button", { name: "Block domain" }).click();
    assert.match(await page.locator(".notice").textContent(), /Blocked noisy\.example \(silence\)/);
    for (const path of ADMIN) {
      await page.goto(`${server.url}${path}`);
      assert.equal(await page.getByRole("navigation", { name: "Administration" }).locator('a[aria-current="page"]').getAttribute("href"), path);
      await screenshot(page, shot(path));
    }
    await page.goto(`${server.url}/admin/roles`);
    assert.match(await page.locator('[data-role="Owner"] h2').textContent(), /position 1000, 1 user\)/);
    await screenshot(page, shot("/admin/roles"));
  });

  test("a report's Suspend asks first, and acts once confirmed", async () => {
    const id = need(s.reportId, "setup");
    await page.goto(`${server.url}/admin/reports`);
    await screenshot(page, shot("/admin/reports"));
    const card = page.locator(`[data-report="${id}"]`);
    await card.locator('select[name="type"]').selectOption("suspend");
    await card.getByRole("button", { name: "Apply and resolve" }).click();
    const question = page.locator("#confirmation");
    assert.match(await page.locator(".card h2").last().textContent(), /Suspend @troll\?/);
    assert.match(await question.textContent(), /stop @troll from signing in/);
    await screenshot(page, "tour-admin-confirm-suspend.png");
    // Not yet: the report is still open.
    await page.getByRole("link", { name: "Cancel" }).click();
    await page.waitForURL(`${server.url}/admin/reports`);
    assert.equal(await page.locator(`[data-report="${id}"]`).count(), 1);
    await page.locator(`[data-report="${id}"] select[name="type"]`).selectOption("suspend");
    await page.locator(`[data-report="${id}"]`).getByRole("button", { name: "Apply and resolve" }).click();
    await page.getByRole("button", { name: "Suspend @troll" }).click();
    await page.waitForURL(`${server.url}/admin/reports`);
    assert.match(await page.locator(".notice").textContent(), new RegExp(`Applied "suspend" and resolved report #${id}`));
    assert.equal(await page.locator(`[data-report="${id}"]`).count(), 0);
  });

  test("the audit log names accounts by handle", async () => {
    need(s.reportId, "setup");
    await page.goto(`${server.url}/admin/log`);
    const rows = await page.locator("table tbody tr").allTextContents();
    assert.ok(
      rows.some((r) => r.endsWith("@bosssuspended@troll")),
      rows.join("\n"),
    );
    assert.ok(
      rows.some((r) => r.endsWith("@bossresolveda report on @troll")),
      rows.join("\n"),
    );
    assert.doesNotMatch(rows.join("\n"), /Account #|Report #/);
    await screenshot(page, shot("/admin/log"));
  });
});
