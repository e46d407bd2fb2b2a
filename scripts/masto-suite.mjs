#!/usr/bin/env node
// Runs masto.js's end-to-end suite (its tests/**/*.spec.ts, written against a Mastodon in docker) against a local
// Tern. Nothing of masto.js is kept here: give it the path of a masto.js checkout whose dev dependencies are installed.
//
//   git clone https://github.com/neet/masto.js /tmp/masto && (cd /tmp/masto && npm ci)
//   npm run masto-suite -- /tmp/masto [--port 3000] [--keep-state] [-- <vitest arguments, e.g. tests/rest/v1/lists.spec.ts>]
//
// masto.js's own setup reaches its Mastodon through docker (tootctl creates a user per test session) and Redis (a pool
// of those users' tokens). This script adds three files of its own to the checkout, under test-utils/tern/ and
// vitest.tern.config.ts (masto.js's files are left as they are), which do the same against Tern:
// - Tern is served by `scripts/dev.mjs` (Miniflare) on the port, with its state in .wrangler/masto-suite/ (emptied at
//   each run unless --keep-state);
// - the admin the suite signs in as is made with `scripts/admin.mjs create-user` (admin@localhost.test, password
//   mastodonadmin: Mastodon's docker image uses admin@localhost, an address without a dot in its domain, which Tern's
//   sign-up refuses, so masto.js's tests/oauth/token.spec.ts, which names it, fails here);
// - each test user is made with `scripts/admin.mjs create-user` and signs in with the password grant, and the tokens
//   are shared between vitest's workers through lock files instead of Redis.
// The run ends with vitest's summary; the exit code is vitest's. MASTO_SUITE_SERVER_LOG=FILE writes Tern's output
// there when a test failed.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "./node.mjs";

await runOnRecentNode();

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const own = dash < 0 ? argv : argv.slice(0, dash);
const vitestArgs = dash < 0 ? [] : argv.slice(dash + 1);
const die = (msg) => {
  console.error(`masto-suite: ${msg}`);
  process.exit(2);
};
const value = (name) => {
  const i = own.indexOf(name);
  return i < 0 ? undefined : own[i + 1];
};
const checkout = own.find((a, i) => !a.startsWith("--") && own[i - 1] !== "--port");
if (!checkout) die("give the path of a masto.js checkout (with its dev dependencies installed: npm ci)");
const masto = resolve(checkout);
if (!existsSync(join(masto, "tests")) || !existsSync(join(masto, "test-utils", "setup-files"))) die(`${masto} is not a masto.js checkout`);
if (!existsSync(join(masto, "node_modules", "vitest"))) die(`run npm ci in ${masto} first`);
const port = value("--port") ?? "3000";
const url = `http://localhost:${port}`;
const state = join(root, ".wrangler", "masto-suite");
const cache = join(masto, "node_modules", ".cache", "masto-tern");

writeSupportFiles();
rmSync(cache, { recursive: true, force: true });
if (!own.includes("--keep-state")) rmSync(state, { recursive: true, force: true });

const server = spawn(process.execPath, [join(root, "scripts", "dev.mjs"), "--port", port, "--persist-to", state, "--snapshot"], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
});
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));
server.stderr.on("data", (d) => (serverLog += d));
const stopServer = () => server.exitCode === null && server.kill("SIGTERM");
process.on("exit", stopServer);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

const started = Date.now();
for (;;) {
  if (server.exitCode !== null) die(`Tern did not start:\n${serverLog}`);
  if (Date.now() - started > 180_000) die(`Tern did not answer within 3 minutes:\n${serverLog}`);
  const res = await fetch(`${url}/api/v1/instance`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  if (res?.ok) break;
  await new Promise((r) => setTimeout(r, 500));
}
console.log(`› Tern answers at ${url} (state in ${state})`);

const admin = spawnSync(
  process.execPath,
  [
    join(root, "scripts", "admin.mjs"),
    "create-user",
    "admin",
    "admin@localhost.test",
    "--role",
    "admin",
    "--password",
    "mastodonadmin",
    "--allow-reserved",
    "--persist-to",
    state,
    "--origin",
    url,
  ],
  { cwd: root, encoding: "utf8" },
);
if (admin.status !== 0 && !/taken|exists/.test(admin.stderr + admin.stdout)) die(`could not create the admin:\n${admin.stdout}${admin.stderr}`);

const vitest = spawn(process.execPath, [join(masto, "node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.tern.config.ts", ...vitestArgs], {
  cwd: masto,
  stdio: "inherit",
  env: { ...process.env, TERN_URL: url, TERN_ROOT: root, TERN_STATE: state, TERN_NODE: process.execPath },
});
const code = await new Promise((r) => vitest.on("exit", (c) => r(c ?? 1)));
if (code !== 0 && process.env.MASTO_SUITE_SERVER_LOG) writeFileSync(process.env.MASTO_SUITE_SERVER_LOG, serverLog);
process.exit(code);

function writeSupportFiles() {
  const dir = join(masto, "test-utils", "tern");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(masto, "vitest.tern.config.ts"),
    `// Written by Tern's scripts/masto-suite.mjs: masto.js's e2e project, set up against a local Tern.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true,
    pool: "threads",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: "./test-utils/tern/global-setup.ts",
    environment: "./test-utils/tern/environment.ts",
    setupFiles: [
      "./test-utils/setup-files/vitest-extend-expect.ts",
      "./test-utils/setup-files/vitest-polyfills.ts",
      "./test-utils/setup-files/vitest-sessions.ts",
    ],
    include: ["tests/**/*.spec.ts"],
  },
});
`,
  );
  writeFileSync(
    join(dir, "global-setup.ts"),
    `// Written by Tern's scripts/masto-suite.mjs: the app and the admin's token, as masto.js's global setup makes them.
import fs from "node:fs";
import path from "node:path";

import { createOAuthAPIClient, createRestAPIClient } from "../../src/index.js";

export default async function main(): Promise<void> {
  const url = process.env.TERN_URL!;
  const dir = path.join(import.meta.dirname, "../../node_modules/.cache/masto-tern");
  fs.mkdirSync(path.join(dir, "tokens"), { recursive: true });
  for (const f of fs.readdirSync(path.join(dir, "tokens"))) if (f.endsWith(".lock")) fs.rmSync(path.join(dir, "tokens", f));
  if (fs.existsSync(path.join(dir, "admin_token.json"))) return;
  const app = await createRestAPIClient({ url }).v1.apps.create({
    clientName: "Masto.js",
    redirectUris: "urn:ietf:wg:oauth:2.0:oob",
    scopes: "read write follow push admin:read admin:write",
  });
  const token = await createOAuthAPIClient({ url }).token.create({
    grantType: "password",
    clientId: app.clientId!,
    clientSecret: app.clientSecret!,
    username: "admin@localhost.test",
    password: "mastodonadmin",
    scope: "read write follow push admin:read admin:write",
    redirectUri: "urn:ietf:wg:oauth:2.0:oob",
  });
  fs.writeFileSync(path.join(dir, "app.json"), JSON.stringify(app));
  fs.writeFileSync(path.join(dir, "admin_token.json"), JSON.stringify(token));
}
`,
  );
  writeFileSync(
    join(dir, "environment.ts"),
    `// Written by Tern's scripts/masto-suite.mjs: masto.js's test environment with Tern's admin command in place of
// tootctl and lock files in place of Redis.
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

import type { Environment } from "vitest/environments";

import { createOAuthAPIClient, createRestAPIClient, type mastodon } from "../../src/index.js";
import type { TokenPool } from "../services/index.js";

const run = promisify(execFile);
const dir = path.join(import.meta.dirname, "../../node_modules/.cache/masto-tern");
const tokensDir = path.join(dir, "tokens");

class TokenPoolFiles implements TokenPool {
  constructor(
    private readonly url: string,
    private readonly app: mastodon.v1.Client,
  ) {}

  async acquire(): Promise<mastodon.v1.Token> {
    for (const f of fs.readdirSync(tokensDir).filter((f) => f.endsWith(".json"))) {
      try {
        fs.closeSync(fs.openSync(path.join(tokensDir, f + ".lock"), "wx"));
      } catch {
        continue;
      }
      return JSON.parse(fs.readFileSync(path.join(tokensDir, f), "utf8"));
    }
    const username = "u" + crypto.randomBytes(7).toString("hex");
    const password = crypto.randomBytes(12).toString("hex");
    await run(
      process.env.TERN_NODE!,
      ["scripts/admin.mjs", "create-user", username, username + "@example.com", "--password", password, "--persist-to", process.env.TERN_STATE!, "--origin", this.url],
      { cwd: process.env.TERN_ROOT! },
    );
    const oauth = createOAuthAPIClient({ url: this.url });
    for (let attempt = 0; ; attempt++) {
      try {
        const token = await oauth.token.create({
          grantType: "password",
          clientId: this.app.clientId!,
          clientSecret: this.app.clientSecret!,
          username: username + "@example.com",
          password,
          scope: "read write follow push admin:read admin:write",
          redirectUri: "urn:ietf:wg:oauth:2.0:oob",
        });
        const name = token.accessToken.slice(0, 16) + ".json";
        fs.closeSync(fs.openSync(path.join(tokensDir, name + ".lock"), "wx"));
        fs.writeFileSync(path.join(tokensDir, name), JSON.stringify(token));
        return token;
      } catch (error) {
        // Sign-ins are limited per IP (25 in 5 minutes, as Mastodon's rack-attack): wait for the window to pass.
        if ((error as { statusCode?: number }).statusCode !== 429 || attempt > 12) throw error;
        await new Promise((r) => setTimeout(r, 30_000));
      }
    }
  }

  async release(token: mastodon.v1.Token): Promise<void> {
    fs.rmSync(path.join(tokensDir, token.accessToken.slice(0, 16) + ".json.lock"), { force: true });
  }
}

export default <Environment>{
  name: "tern",
  viteEnvironment: "ssr",
  async setup() {
    const url = process.env.TERN_URL!;
    const app = JSON.parse(fs.readFileSync(path.join(dir, "app.json"), "utf8"));
    const adminToken = JSON.parse(fs.readFileSync(path.join(dir, "admin_token.json"), "utf8"));
    const instance = await createRestAPIClient({ url }).v1.instance.fetch();
    globalThis.__misc__ = { url, app, instance, adminToken, tokens: new TokenPoolFiles(url, app) };
    return { teardown() {} };
  },
};
`,
  );
}
