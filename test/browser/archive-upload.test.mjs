// An archive larger than one request (the platform takes 100 MB) uploaded from the settings page in a real browser
// (Debian's chromium through playwright-core, JavaScript on): the page's script sends it in parts through the session's
// routes (R2's multipart upload), and the import starts. Without JavaScript the page says to upload outbox.json alone.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startTern } from "../support/server.mjs";
import { zipOf } from "../support/zip.mjs";
import { json, launchChromium, need, screenshot, signUpThroughApi, skip } from "./support.mjs";

const EMAIL = "archive-user@example.test";
const PASSWORD = "a long enough password 789";

describe("an archive over 100 MB from the settings page", { skip }, () => {
  let server, browser, page, dir;
  const s = {};

  before(async () => {
    server = await startTern();
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    dir = mkdtempSync(join(tmpdir(), "tern-archive-"));
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a user signs up through the API and signs in on the page", async () => {
    s.token = await signUpThroughApi(server.url, { clientName: "Archive app", username: "archiveuser", email: EMAIL, password: PASSWORD });
    const me = await json(await fetch(`${server.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${s.token}` } }), "me");
    s.uri = me.uri;
    await page.goto(`${server.url}/auth/sign_in`);
    await page.locator('input[name="email"]').fill(EMAIL);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    s.signedIn = true;
  });

  test("the archive goes in parts and its import starts", async () => {
    need(s.signedIn, "sign-in");
    // The account's own archive: its actor, one post, and 101 MiB of media stored as they are.
    const create = {
      id: `${s.uri}/statuses/1/activity`,
      type: "Create",
      actor: s.uri,
      published: "2024-05-01T10:00:00Z",
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${s.uri}/followers`],
      object: {
        id: `${s.uri}/statuses/1`,
        type: "Note",
        attributedTo: s.uri,
        content: "<p>from my old server</p>",
        published: "2024-05-01T10:00:00Z",
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        cc: [`${s.uri}/followers`],
      },
    };
    const outbox = { "@context": "https://www.w3.org/ns/activitystreams", id: "outbox.json", type: "OrderedCollection", totalItems: 1, orderedItems: [create] };
    const bytes = zipOf([
      { name: "outbox.json", data: Buffer.from(JSON.stringify(outbox)) },
      { name: "actor.json", data: Buffer.from(JSON.stringify({ id: s.uri, type: "Person", preferredUsername: "archiveuser" })) },
      { name: "media_attachments/files/padding.bin", data: Buffer.alloc(101 * 1024 * 1024, 7), store: true },
    ]);
    assert.ok(bytes.length > 100 * 1024 * 1024);
    const file = join(dir, "archive-big.zip");
    writeFileSync(file, bytes);

    await page.goto(`${server.url}/settings/import_archive`);
    await page.locator('input[name="data"]').setInputFiles(file);
    const parts = [];
    page.on("request", (r) => {
      if (r.method() === "PUT" && r.url().includes("/settings/import_archive/uploads/")) parts.push(r.url());
    });
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.locator("[data-archive-import]").first().waitFor();
    await screenshot(page, "archive-upload.png");
    assert.equal(parts.length, 3, "101 MiB in parts of 50 MiB");
    assert.match(await page.locator("[data-archive-import]").first().textContent(), /archive-big\.zip/);
    const imports = await json(await fetch(`${server.url}/api/tern/archive_imports`, { headers: { authorization: `Bearer ${s.token}` } }), "imports");
    assert.equal(imports.length, 1);
    assert.equal(imports[0].kind, "zip");
    assert.equal(imports[0].actor, s.uri);
    assert.ok(["in_progress", "finished"].includes(imports[0].state), imports[0].state);
  });
});
