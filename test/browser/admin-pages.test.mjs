// The admin pages in a real browser (Debian's chromium through playwright-core) with JavaScript turned off: the owner
// is created on the setup page (which signs them in), follows the front page's link to /admin, blocks a domain,
// resolves a report and uploads a custom emoji; each result is checked through the API.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { json, launchChromium, need, screenshot, skip } from "./support.mjs";

const OWNER = { username: "boss", email: "boss@example.test", password: "a long enough password 123" };
// A 1×1 PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

describe("admin pages in chromium (no JavaScript)", { skip }, () => {
  let server, browser, page;
  const s = {};
  const api = (path, token, init = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { ...(init.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const form = (body) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body) });

  before(async () => {
    server = await startTern();
    browser = await launchChromium();
    // Plain forms only: the pages must work with scripts off.
    const context = await browser.newContext({ javaScriptEnabled: false });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await server?.stop();
  });

  test("creates the owner on the setup page, which signs them in", async () => {
    await page.goto(`${server.url}/setup?token=e2e-setup`);
    await page.locator("#username").fill(OWNER.username);
    await page.locator("#email").fill(OWNER.email);
    await page.locator("#password").fill(OWNER.password);
    await page.getByRole("button", { name: "Create owner" }).click();
    await page.waitForURL(`${server.url}/`);
    assert.match(await page.content(), /Signed in as/);
    s.owner = true;
  });

  test("prepares a report through the API (an app, two users, a status, the report) and an owner token", async () => {
    need(s.owner, "owner setup");
    const app = await json(
      await api("/api/v1/apps", null, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "admin test", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write admin:read admin:write" }),
      }),
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
          await api("/api/v1/accounts", appToken.access_token, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ username, email: `${username}@example.test`, password: "another long password 1", agreement: true, locale: "en" }),
          }),
          `sign-up of ${username}`,
        )
      ).access_token;
    const [reporter, troll] = [await signUp("reporter"), await signUp("troll")];
    const trollAccount = await json(await api("/api/v1/accounts/verify_credentials", troll), "troll verify_credentials");
    const status = await json(
      await api("/api/v1/statuses", troll, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "buy cheap pills" }),
      }),
      "troll's status",
    );
    const report = await json(
      await api("/api/v1/reports", reporter, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ account_id: trollAccount.id, status_ids: [status.id], comment: "spam", category: "spam" }),
      }),
      "POST /api/v1/reports",
    );
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
          scope: "read write admin:read admin:write",
        }),
      ),
      "password grant for the owner",
    );
    s.reportId = report.id;
    s.token = owner.access_token;
  });

  test("blocks a domain from the Domains page", async () => {
    const token = need(s.token, "owner token");
    await page.goto(`${server.url}/`);
    await page.getByRole("link", { name: "Administration" }).click();
    await page.waitForURL(`${server.url}/admin`);
    await page.getByRole("link", { name: "Domains" }).first().click();
    await page.locator("#block-domain").fill("spam.example");
    await page.locator('form[action="/admin/domains/blocks"] select[name="severity"]').selectOption("suspend");
    await page.locator('form[action="/admin/domains/blocks"] input[name="reject_reports"]').check();
    await page.getByRole("button", { name: "Block domain" }).click();
    // Suspending a domain asks first, saying what it does.
    assert.match(await page.locator("#confirmation").textContent(), /remove every follow between this server's users and those accounts/);
    await page.getByRole("button", { name: "Suspend spam.example" }).click();
    await page.waitForURL(`${server.url}/admin/domains`);
    assert.match(await page.locator(".notice").textContent(), /Blocked spam\.example \(suspend\)/);
    const blocks = await json(await api("/api/v1/admin/domain_blocks", token), "GET /api/v1/admin/domain_blocks");
    assert.equal(blocks.length, 1);
    assert.equal(blocks[0].domain, "spam.example");
    assert.equal(blocks[0].severity, "suspend");
    assert.equal(blocks[0].reject_reports, true);
  });

  test("resolves the report from the Reports page", async () => {
    const token = need(s.token, "owner token");
    const id = need(s.reportId, "report");
    await page.getByRole("link", { name: "Reports" }).first().click();
    await page.waitForURL(`${server.url}/admin/reports`);
    const card = page.locator(`[data-report="${id}"]`);
    assert.match(await card.textContent(), /buy cheap pills/);
    await card.getByRole("button", { name: "Resolve", exact: true }).click();
    await page.waitForURL(`${server.url}/admin/reports`);
    assert.match(await page.locator(".notice").textContent(), new RegExp(`Report #${id} is resolved`));
    const report = await json(await api(`/api/v1/admin/reports/${id}`, token), "GET /api/v1/admin/reports/:id");
    assert.equal(report.action_taken, true);
    const open = await json(await api("/api/v1/admin/reports", token), "GET /api/v1/admin/reports");
    assert.equal(open.length, 0);
  });

  test("uploads a custom emoji from the Custom emojis page", async () => {
    need(s.token, "owner token");
    await page.getByRole("link", { name: "Custom emojis" }).first().click();
    await page.waitForURL(`${server.url}/admin/emojis`);
    await page.locator("#emoji-shortcode").fill("tern_wave");
    await page.locator("#emoji-category").fill("Birds");
    await page.locator("#emoji-image").setInputFiles({ name: "wave.png", mimeType: "image/png", buffer: PNG });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.waitForURL(`${server.url}/admin/emojis`);
    assert.match(await page.locator(".notice").textContent(), /Added :tern_wave:/);
    await screenshot(page, "admin-emojis.png");
    const emojis = await json(await api("/api/v1/custom_emojis"), "GET /api/v1/custom_emojis");
    const emoji = emojis.find((e) => e.shortcode === "tern_wave");
    assert.ok(emoji, `the emoji is listed: ${JSON.stringify(emojis)}`);
    assert.equal(emoji.category, "Birds");
    const img = await fetch(emoji.url.replace(/^https?:\/\/[^/]+/, server.url));
    assert.equal(img.status, 200);
    assert.equal(img.headers.get("content-type"), "image/png");
    assert.deepEqual(Buffer.from(await img.arrayBuffer()), PNG);
  });

  test("the audit log lists the three actions, naming what each changed", async () => {
    need(s.token, "owner token");
    await page.getByRole("link", { name: "Audit log" }).first().click();
    await page.waitForURL(`${server.url}/admin/log`);
    const rows = await page.locator("table tbody tr").allTextContents();
    for (const t of ["createddomain block spam.example", "resolveda report on @troll", "createdcustom emoji :tern_wave:"]) {
      assert.ok(
        rows.some((r) => r.endsWith(`@boss${t}`)),
        `${t} in:\n${rows.join("\n")}`,
      );
    }
    await screenshot(page, "admin-log.png");
  });
});
