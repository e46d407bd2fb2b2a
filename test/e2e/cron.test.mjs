// The cron under `wrangler dev` (issue "operator's path", point 2), as a client sees it: a status scheduled with masto
// is published by the scheduled handler, which the harness fires as `npm run dev -- --wrangler` does (wrangler dev fires
// no cron itself; here every second instead of every minute), with nobody calling it by hand. The API refuses a time
// sooner than five minutes ahead, so the test moves the row's time in the local D1 (`wrangler d1 execute`) as ten
// minutes passing would.
import "../support/polyfills.mjs";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createOAuthAPIClient, createRestAPIClient } from "masto";
import { quietEnv, root, startTern } from "../support/server.mjs";
import { nodeBin } from "../../scripts/node.mjs";

const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const OOB = "urn:ietf:wg:oauth:2.0:oob";
const SCOPES = "read write";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe("the cron under wrangler dev", () => {
  let tern;
  before(async () => {
    tern = await startTern({ cronEveryMs: 1000 });
  });
  after(async () => {
    await tern?.stop();
  });

  test("publishes a status scheduled with masto once it is due", { timeout: 180_000 }, async () => {
    const anon = createRestAPIClient({ url: tern.url, timeout: 30_000 });
    const app = await anon.v1.apps.create({ clientName: "Tern cron e2e", redirectUris: OOB, scopes: SCOPES });
    const oauth = createOAuthAPIClient({ url: tern.url, timeout: 30_000 });
    const appToken = await oauth.token.create({
      grantType: "client_credentials",
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      redirectUri: OOB,
      scope: SCOPES,
    });
    const signUp = await createRestAPIClient({ url: tern.url, accessToken: appToken.accessToken, timeout: 30_000 }).v1.accounts.create({
      username: "planner",
      email: "planner@example.test",
      password: "correct horse battery staple",
      agreement: true,
      locale: "en",
    });
    const client = createRestAPIClient({ url: tern.url, accessToken: signUp.accessToken, timeout: 30_000 });
    const me = await client.v1.accounts.verifyCredentials();

    const at = new Date(Date.now() + 10 * 60_000);
    const scheduled = await client.v1.statuses.create({ status: "Out on time", scheduledAt: at.toISOString() });
    assert.equal(scheduled.params.text, "Out on time");

    const r = spawnSync(
      nodeBin,
      [
        wranglerBin,
        "d1",
        "execute",
        "DB",
        "--local",
        "--persist-to",
        tern.persistTo,
        "--command",
        `UPDATE scheduled_statuses SET scheduled_at = ${Date.now() - 1000}`,
      ],
      { cwd: root, encoding: "utf8", env: quietEnv },
    );
    assert.equal(r.status, 0, r.stderr);

    let posted = [];
    for (let i = 0; i < 240 && !posted.length; i++) {
      posted = await client.v1.accounts.$select(me.id).statuses.list();
      if (!posted.length) await sleep(250);
    }
    assert.deepEqual(
      posted.map((s) => s.content),
      ["<p>Out on time</p>"],
    );
    assert.deepEqual(await client.v1.scheduledStatuses.list(), []);
  });
});
