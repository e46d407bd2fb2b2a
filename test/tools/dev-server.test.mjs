// `npm run dev` (scripts/dev.mjs with scripts/dev-server.mjs): the cron matcher and driver alone, then the command as a
// newcomer runs it, on a throwaway state directory and port: it applies the migrations, serves Tern with Miniflare
// alone (no wrangler proxy in front), a client signs up and posts, the Worker's scheduled handler runs (the crons fire
// every second here, TERN_DEV_CRON_MS, instead of on their minutes) and SIGTERM stops it; and its server publishes a
// scheduled status once it is due, with nobody calling the scheduled handler by hand.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { signUp } from "../../bench/miniflare.mjs";
import { cronMatches, serveDev, startCron } from "../../scripts/dev-server.mjs";
import { applyMigrations, freePort } from "../support/server.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("cron triggers", () => {
  const at = (iso) => new Date(iso);
  test("five-field expressions match their UTC minutes", () => {
    assert.equal(cronMatches("* * * * *", at("2026-11-28T09:05:00Z")), true);
    assert.equal(cronMatches("*/5 * * * *", at("2026-11-28T09:05:00Z")), true);
    assert.equal(cronMatches("*/5 * * * *", at("2026-11-28T09:06:00Z")), false);
    assert.equal(cronMatches("0 3 * * *", at("2026-11-28T03:00:00Z")), true);
    assert.equal(cronMatches("0 3 * * *", at("2026-11-28T04:00:00Z")), false);
    assert.equal(cronMatches("0,30 9-17 * * 1-5", at("2026-11-27T12:30:00Z")), true); // a Friday
    assert.equal(cronMatches("0,30 9-17 * * 1-5", at("2026-11-28T12:30:00Z")), false); // a Saturday
    assert.equal(cronMatches("0 0 * * 7", at("2026-11-29T00:00:00Z")), true); // 7 is Sunday too
    assert.equal(cronMatches("not a cron", at("2026-11-28T09:05:00Z")), false);
  });

  test("the driver fires each cron, reports a failed run and stops", async () => {
    const runs = [];
    const lines = [];
    let resolveTwo;
    const two = new Promise((r) => (resolveTwo = r));
    const stop = startCron(
      ["* * * * *"],
      async (cron) => {
        runs.push(cron);
        if (runs.length === 1) throw new Error("D1 is down");
        return "exception";
      },
      {
        everyMs: 20,
        log: (line) => {
          lines.push(line);
          if (lines.length === 2) resolveTwo();
        },
      },
    );
    await two;
    stop();
    assert.match(lines[0], /✖ cron "\* \* \* \* \*" at .*: D1 is down/);
    assert.match(lines[1], /✖ cron .*: exception/);
  });
});

describe("npm run dev", () => {
  const state = mkdtempSync(join(tmpdir(), "tern-dev-test-"));
  let child = null;
  after(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    rmSync(state, { recursive: true, force: true });
  });

  test("serves Tern with Miniflare alone, fires the crons and stops on SIGTERM", { timeout: 180_000 }, async () => {
    const port = await freePort();
    child = spawn(process.execPath, [join(root, "scripts", "dev.mjs"), "--port", String(port), "--persist-to", state, "--log-cron"], {
      cwd: root,
      env: { ...process.env, TERN_DEV_CRON_MS: "1000", WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const waiters = [];
    const onData = (d) => {
      output += d;
      for (const w of waiters) if (w.re.test(output)) w.resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
    const seen = (re) =>
      Promise.race([
        new Promise((resolve) => (re.test(output) ? resolve() : waiters.push({ re, resolve }))),
        exited.then(() => assert.fail(`npm run dev exited before ${re}:\n${output}`)),
      ]);

    await seen(/Tern is running at (\S+)/);
    const base = /Tern is running at (\S+)/.exec(output)[1];
    assert.equal(base, `http://127.0.0.1:${port}`);
    assert.match(output, /Serving with Miniflare/);
    assert.doesNotMatch(output, /Starting wrangler dev/);

    const token = await signUp(base, "newcomer");
    const posted = await fetch(`${base}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ status: "First post on my own server" }),
    });
    assert.equal(posted.status, 200);
    const status = await posted.json();
    const home = await (await fetch(`${base}/api/v1/timelines/home`, { headers: { authorization: `Bearer ${token}` } })).json();
    assert.deepEqual(
      home.map((s) => s.id),
      [status.id],
    );

    // The Worker's scheduled handler ran and answered "ok" (what Cloudflare would run every minute).
    await seen(/› cron "\* \* \* \* \*" at \S+: ok/);
    assert.doesNotMatch(output, /✖ cron/);

    child.kill("SIGTERM");
    const { code } = await exited;
    assert.equal(code, 0, output);
  });
});

describe("the dev server's cron", () => {
  const state = mkdtempSync(join(tmpdir(), "tern-dev-cron-"));
  let server = null;
  after(async () => {
    await server?.close();
    rmSync(state, { recursive: true, force: true });
  });

  test("publishes a scheduled status once it is due", { timeout: 180_000 }, async () => {
    applyMigrations(state);
    const port = await freePort();
    const vars = { REGISTRATIONS_MODE: "open", SECRET_KEY_BASE: "dev-cron-test", SETUP_TOKEN: "dev-cron-test" };
    // Its lines are kept, not printed: this file's stdout carries node:test's messages to the runner, and Node 20's
    // runner failed to read them back ("Unable to deserialize cloned data") with the server's output among them.
    process.env.WRANGLER_LOG = "warn"; // its "Using vars defined in .dev.vars" too
    const lines = [];
    let onCron = () => {};
    const print = (line) => {
      lines.push(line);
      if (/^. cron "/.test(line)) onCron();
    };
    server = await serveDev({ root, host: "127.0.0.1", port, persistTo: state, vars, watching: false, logCron: true, cronEveryMs: 500, print });
    const base = `http://127.0.0.1:${port}`;
    const token = await signUp(base, "planner");
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const scheduledAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const res = await fetch(`${base}/api/v1/statuses`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ status: "Posted by the cron", scheduled_at: scheduledAt }),
    });
    assert.equal(res.status, 200);
    const scheduled = await res.json();
    assert.equal(scheduled.scheduled_at, scheduledAt);

    // Ten minutes pass (the row's time is moved, as the API refuses anything sooner than five minutes ahead).
    const db = await server.mf.getD1Database("DB");
    await db
      .prepare("UPDATE scheduled_statuses SET scheduled_at = ?")
      .bind(Date.now() - 1000)
      .run();

    // Two crons finish after the move: the second one began after it, whatever the first was doing then. (The test's
    // own timeout bounds the wait below.)
    await new Promise((resolve) => {
      let runs = 0;
      onCron = () => ++runs === 2 && resolve();
    });
    assert.doesNotMatch(lines.join("\n"), /✖ cron/);
    // The cron hands the publication to the jobs queue: the status appears once its consumer has run.
    const me = await (await fetch(`${base}/api/v1/accounts/verify_credentials`, { headers: auth })).json();
    let posted = [];
    while (!posted.length) {
      posted = await (await fetch(`${base}/api/v1/accounts/${me.id}/statuses`, { headers: auth })).json();
      if (!posted.length) await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(
      posted.map((s) => s.content),
      ["<p>Posted by the cron</p>"],
    );
    const left = await (await fetch(`${base}/api/v1/scheduled_statuses`, { headers: auth })).json();
    assert.deepEqual(left, []);
  });
});
