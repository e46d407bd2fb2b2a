// `npm run deploy` (scripts/deploy.mjs) with the real wrangler, without a Cloudflare account: wrangler and the script
// talk to a stand-in for the Cloudflare API on loopback (test/support/cloudflare-api-stand-in.mjs, through
// CLOUDFLARE_API_BASE_URL), which keeps state and records every call. HTTP_PROXY and HTTPS_PROXY point to a trap that
// records whatever reaches it: wrangler sends every request for a non-loopback host through it (and so does Node's
// fetch under NODE_USE_ENV_PROXY), so an empty trap shows that nothing but the stand-in was contacted.
// A project copy in a temporary directory (wrangler.toml with an absolute `main`, the migrations) is deployed twice:
// a first deploy, then an upgrade with one new migration. Then each refusal: not logged in, a domain that is not on the
// account, a plan limit answered by the API.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startCloudflareApi } from "../support/cloudflare-api-stand-in.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TOKEN = "stand-in-api-token";
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const DOMAIN = "social.example.org";
const temp = mkdtempSync(join(tmpdir(), "tern-deploy-test-"));

/** A throwaway copy of what wrangler deploys: wrangler.toml (its `main` pointing into this checkout) and migrations/. */
function makeProject(name) {
  const dir = join(temp, name);
  cpSync(join(root, "migrations"), join(dir, "migrations"), { recursive: true });
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8").replace(/^main = .*$/m, `main = ${JSON.stringify(join(root, "src", "index.ts"))}`);
  writeFileSync(join(dir, "wrangler.toml"), toml);
  return dir;
}

/** A proxy that answers nothing: every request or CONNECT that reaches it is recorded and refused. */
async function startTrap() {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  server.on("connect", (req, socket) => {
    seen.push(`CONNECT ${req.url}`);
    socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { seen, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

let trap;
before(async () => {
  trap = await startTrap();
});
after(async () => {
  await trap?.close();
  rmSync(temp, { recursive: true, force: true });
});

/** `npm run deploy -- <args>` against `api`; resolves when it exits, with its exit code and output. */
function deploy(api, project, args = [], { token = TOKEN, env: extra = {} } = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(CLOUDFLARE_|WRANGLER_|CF_)|^(https?_proxy|no_proxy)$/i.test(k)) delete env[k];
  Object.assign(env, {
    CLOUDFLARE_API_BASE_URL: api.url,
    CLOUDFLARE_ACCOUNT_ID: ACCOUNT,
    ...(token ? { CLOUDFLARE_API_TOKEN: token } : {}),
    // wrangler's own state (a `wrangler login`, logs, caches) in a fresh directory: no credentials of this machine.
    XDG_CONFIG_HOME: join(project, ".config"),
    HTTP_PROXY: trap.url,
    HTTPS_PROXY: trap.url,
    NO_PROXY: "127.0.0.1,localhost,::1",
    NODE_USE_ENV_PROXY: "1",
    npm_config_update_notifier: "false",
    ...extra,
  });
  return new Promise((resolve) => {
    const child = spawn(
      process.platform === "win32" ? "npm.cmd" : "npm",
      ["run", "--silent", "deploy", "--", "--config", join(project, "wrangler.toml"), ...args],
      {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => resolve({ code, output }));
  });
}

const creates = (api) => api.calls.filter((c) => c.method === "POST" && /\/(d1\/database|r2\/buckets|queues)$/.test(c.path));
const migrationCalls = (api, from = 0) =>
  api.calls
    .slice(from)
    .filter((c) => c.method === "POST" && /\/d1\/database\/[^/]+\/query$/.test(c.path) && /INSERT INTO "d1_migrations"/.test(c.body?.sql ?? ""));
const uploads = (api, from = 0) =>
  api.calls
    .slice(from)
    .filter(
      (c) => (c.method === "PUT" && /\/workers\/scripts\/tern$/.test(c.path)) || (c.method === "POST" && /\/workers\/scripts\/tern\/versions$/.test(c.path)),
    );

describe("npm run deploy: a first deploy, then an upgrade", () => {
  let api;
  let project;
  let first;
  before(async () => {
    api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    project = makeProject("instance");
    first = await deploy(api, project, ["--domain", DOMAIN]);
  });
  after(() => api?.close());

  test("the first run creates the database, the bucket, the queues and the secrets, once each", () => {
    assert.equal(first.code, 0, first.output);
    const made = creates(api).map((c) => `${c.path.replace(`/accounts/${ACCOUNT}/`, "")} ${c.body.name ?? c.body.queue_name}`);
    assert.deepEqual(made.sort(), ["d1/database tern", "queues tern-dead-letters", "queues tern-delivery", "queues tern-jobs", "r2/buckets tern-media"]);
    const live = api.state.scripts.get("tern");
    assert.deepEqual([...live.secrets.keys()].sort(), ["SECRET_KEY_BASE", "SETUP_TOKEN"]);
    assert.match(live.secrets.get("SECRET_KEY_BASE"), /^[0-9a-f]{64}$/);
  });

  test("the Worker is uploaded with every binding of wrangler.toml, its domain, cron and consumers", () => {
    const [upload] = uploads(api);
    assert.ok(upload, "the script was uploaded");
    const db = [...api.state.databases.values()][0];
    const byName = Object.fromEntries(upload.body.metadata.bindings.map((b) => [b.name, b]));
    assert.deepEqual(byName.DB, { name: "DB", type: "d1", id: db.uuid });
    assert.equal(byName.MEDIA.bucket_name, "tern-media");
    assert.equal(byName.JOBS.queue_name, "tern-jobs");
    assert.equal(byName.DELIVERY.queue_name, "tern-delivery");
    assert.equal(byName.EMAIL.type, "send_email");
    assert.equal(byName.IMAGES.type, "images");
    for (const [name, cls] of [
      ["HOME_FEED", "HomeFeed"],
      ["STREAMING", "Streaming"],
      ["RATE_LIMITER", "RateLimiter"],
    ]) {
      assert.deepEqual({ type: byName[name].type, class_name: byName[name].class_name }, { type: "durable_object_namespace", class_name: cls });
    }
    assert.deepEqual(upload.body.metadata.migrations.steps, [{ new_sqlite_classes: ["HomeFeed", "Streaming", "RateLimiter"] }]);
    assert.equal(byName.LOCAL_DOMAIN.text, DOMAIN);
    assert.equal(byName.SETUP_TOKEN.type, "secret_text");
    assert.ok(upload.body.parts["index.js"], "the bundle is part of the upload");
    const live = api.state.scripts.get("tern");
    assert.deepEqual(live.schedules, [{ cron: "* * * * *" }]);
    assert.deepEqual(
      live.domains.map((d) => d.hostname),
      [DOMAIN],
    );
    const consumers = [...api.state.queues.values()].flatMap((q) =>
      q.consumers.map((c) => `${q.queue_name}→${c.script_name}${c.dead_letter_queue ? ` (dlq ${c.dead_letter_queue})` : ""}`),
    );
    assert.deepEqual(consumers.sort(), ["tern-dead-letters→tern", "tern-delivery→tern (dlq tern-dead-letters)", "tern-jobs→tern (dlq tern-dead-letters)"]);
  });

  test("every migration is applied to the remote database, each with its SQL, and the setup link is printed", () => {
    const files = readdirSql(project);
    const applied = migrationCalls(api).map((c) => /values \('([^']+)'\)/.exec(c.body.sql)[1]);
    assert.deepEqual(applied, files);
    const init = migrationCalls(api).find((c) => c.body.sql.includes("0000_init.sql"));
    assert.ok(
      init.body.sql.startsWith(
        readFileSync(join(project, "migrations", "0000_init.sql"), "utf8")
          .replace(/\r\n/g, "\n")
          .slice(0, 200),
      ),
    );
    // The schema really is there: the stand-in ran the SQL on SQLite.
    const db = [...api.state.databases.values()][0];
    assert.ok(db.sqlite.prepare("SELECT 1 FROM sqlite_master WHERE name = 'statuses'").get());
    const token = api.state.scripts.get("tern").secrets.get("SETUP_TOKEN");
    assert.match(first.output, new RegExp(`Create the owner account: https://${DOMAIN.replace(/\./g, "\\.")}/setup\\?token=${token}`));
    assert.deepEqual(JSON.parse(readFileSync(join(project, ".wrangler", "tern-deploy.json"), "utf8")).domain, DOMAIN);
  });

  test("a second run is an upgrade: the new migration only, nothing created twice, the secrets kept", async () => {
    writeFileSync(join(project, "migrations", "9000_upgrade_test.sql"), "CREATE TABLE upgrade_probe (id INTEGER PRIMARY KEY);\n");
    const secretsBefore = new Map(api.state.scripts.get("tern").secrets);
    const from = api.calls.length;
    const second = await deploy(api, project); // no --domain: the first run's is remembered
    assert.equal(second.code, 0, second.output);
    assert.deepEqual(creates(api).length, 5, "nothing was created again");
    assert.deepEqual(
      migrationCalls(api, from).map((c) => /values \('([^']+)'\)/.exec(c.body.sql)[1]),
      ["9000_upgrade_test.sql"],
    );
    const [upload] = uploads(api, from);
    assert.ok(upload, "the new code was uploaded");
    assert.ok(!upload.body.metadata.bindings.some((b) => b.type === "secret_text"), "no secret was put again");
    // Migrations before the new code: the upgrade's migration call comes before its upload.
    assert.ok(api.calls.indexOf(migrationCalls(api, from)[0]) < api.calls.indexOf(upload));
    const live = api.state.scripts.get("tern");
    assert.deepEqual(live.secrets, secretsBefore);
    assert.deepEqual(live.bindings.map((b) => b.name).sort(), [
      "ALLOW_LOOPBACK_FETCH",
      "DB",
      "DELIVERY",
      "EMAIL",
      "HOME_FEED",
      "IMAGES",
      "JOBS",
      "LOCAL_DOMAIN",
      "MEDIA",
      "PUBLIC_PREVIEW",
      "RATE_LIMITER",
      "REGISTRATIONS_MODE",
      "SECRET_KEY_BASE",
      "SETUP_TOKEN",
      "SHOW_ACTIVITY",
      "SHOW_PEERS",
      "SITE_CONTACT_EMAIL",
      "SITE_TITLE",
      "STREAMING",
    ]);
    assert.equal(live.bindings.find((b) => b.name === "DB").id, [...api.state.databases.values()][0].uuid);
    assert.equal(live.bindings.find((b) => b.name === "LOCAL_DOMAIN").text, DOMAIN);
    assert.equal(
      [...api.state.queues.values()].reduce((n, q) => n + q.consumers.length, 0),
      3,
      "consumers updated, not added",
    );
    assert.match(second.output, /Upgraded/);
    assert.doesNotMatch(second.output, /setup\?token=/);
  });

  test("a run elsewhere, without the saved domain, finds it on the deployed Worker and refuses to change it", async () => {
    rmSync(join(project, ".wrangler", "tern-deploy.json"));
    const changed = await deploy(api, project, ["--domain", "other.example.org"]);
    assert.equal(changed.code, 1);
    assert.match(changed.output, /Tern is deployed on social\.example\.org, not other\.example\.org/);
    const again = await deploy(api, project);
    assert.equal(again.code, 0, again.output);
    assert.match(again.output, /deployed at https:\/\/social\.example\.org/);
  });

  test("--new-setup-token puts a new SETUP_TOKEN only, and prints its link", async () => {
    const before = new Map(api.state.scripts.get("tern").secrets);
    const from = api.calls.length;
    const r = await deploy(api, project, ["--new-setup-token"]);
    assert.equal(r.code, 0, r.output);
    const [upload] = uploads(api, from);
    assert.deepEqual(
      upload.body.metadata.bindings.filter((b) => b.type === "secret_text").map((b) => b.name),
      ["SETUP_TOKEN"],
    );
    const after = api.state.scripts.get("tern").secrets;
    assert.equal(after.get("SECRET_KEY_BASE"), before.get("SECRET_KEY_BASE"));
    assert.notEqual(after.get("SETUP_TOKEN"), before.get("SETUP_TOKEN"));
    assert.ok(r.output.includes(`https://${DOMAIN}/setup?token=${after.get("SETUP_TOKEN")}`));
  });

  test("every call went to the stand-in, with the token, and nothing else was contacted", () => {
    assert.deepEqual(trap.seen, []);
    assert.ok(api.calls.length > 50);
    assert.ok(api.calls.every((c) => c.authorization === `Bearer ${TOKEN}`));
    assert.deepEqual(
      api.calls.filter((c) => c.unknown),
      [],
      "the stand-in knew every call",
    );
  });
});

describe("npm run deploy under Workers Builds (the Deploy to Cloudflare button)", () => {
  test("asks nothing, deploys on workers.dev with wrangler.toml's routes (none) and prints the setup link there", async () => {
    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      const r = await deploy(api, makeProject("builds"), [], { env: { WORKERS_CI: "1", CI: "true" } });
      assert.equal(r.code, 0, r.output);
      assert.equal(creates(api).length, 5);
      assert.deepEqual(
        api.calls.filter((c) => c.path === "/zones" || c.path.includes("/domains/")),
        [],
        "no domain was looked up or attached",
      );
      const live = api.state.scripts.get("tern");
      assert.equal(live.subdomainEnabled, true, "served on workers.dev");
      assert.equal(live.bindings.find((b) => b.name === "LOCAL_DOMAIN").text, "");
      assert.ok(r.output.includes(`Create the owner account: https://tern.operator.workers.dev/setup?token=${live.secrets.get("SETUP_TOKEN")}`));
    } finally {
      await api.close();
    }
  });
});

describe("npm run deploy refuses, saying what to do", () => {
  test("when nobody is logged in", async () => {
    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      const r = await deploy(api, makeProject("no-login"), ["--domain", DOMAIN], { token: null });
      assert.equal(r.code, 1);
      assert.match(r.output, /You are not logged in to Cloudflare\. Run `npx wrangler login` first/);
      assert.match(r.output, /Nothing was created/);
      assert.deepEqual(api.calls, []);
    } finally {
      await api.close();
    }
  });

  test("when the token is refused", async () => {
    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      const r = await deploy(api, makeProject("bad-token"), ["--domain", DOMAIN], { token: "revoked-token" });
      assert.equal(r.code, 1);
      assert.match(r.output, /Cloudflare refused the login \(Authentication error \[code 10000\]\)/);
      assert.match(r.output, /Run `npx wrangler login` again/);
      assert.deepEqual(
        api.calls.filter((c) => c.method !== "GET"),
        [],
      );
    } finally {
      await api.close();
    }
  });

  test("when the API does not answer, or answers an error", async () => {
    const closed = createServer();
    await new Promise((r) => closed.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${closed.address().port}/client/v4`;
    await new Promise((r) => closed.close(r));
    const down = await deploy({ url }, makeProject("api-down"), ["--domain", DOMAIN]);
    assert.equal(down.code, 1);
    assert.match(down.output, /The Cloudflare API \(http:\/\/127\.0\.0\.1:\d+\/client\/v4\) could not be reached: .*ECONNREFUSED/);

    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      api.failNext("GET", /\/queues$/, { status: 503, code: 10013, message: "Service temporarily unavailable" });
      const r = await deploy(api, makeProject("api-error"), ["--domain", DOMAIN]);
      assert.equal(r.code, 1);
      assert.match(r.output, /Listing your queues failed: Service temporarily unavailable \[code 10013\]/);
      assert.deepEqual(creates(api), [], "nothing was created");
      assert.equal(api.calls.filter((c) => c.path.endsWith("/queues")).length, 1, "asked once, not retried in a loop");
    } finally {
      await api.close();
    }
  });

  test("when the domain is not a zone of the account", async () => {
    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      const r = await deploy(api, makeProject("unknown-domain"), ["--domain", "social.elsewhere.test"]);
      assert.equal(r.code, 1);
      assert.match(r.output, /social\.elsewhere\.test is not on this Cloudflare account .*no zone social\.elsewhere\.test or elsewhere\.test/);
      assert.match(r.output, /Add the domain to Cloudflare first/);
      assert.deepEqual(
        api.calls.filter((c) => c.method !== "GET"),
        [],
        "nothing was created or uploaded",
      );
    } finally {
      await api.close();
    }
  });

  test("when the account is at a limit of its plan", async () => {
    const api = await startCloudflareApi({ token: TOKEN, accountId: ACCOUNT, zones: ["example.org"] });
    try {
      // D1's answer when an account has all the databases its plan allows (wrangler's renderD1DatabaseLimitError).
      api.failNext("POST", /\/d1\/database$/, { status: 400, code: 7406, message: "You have reached the maximum number of databases for this account." });
      const project = makeProject("plan-limit");
      const r = await deploy(api, project, ["--domain", DOMAIN]);
      assert.equal(r.code, 1);
      assert.match(r.output, /You have reached the maximum number of D1 databases/);
      assert.match(r.output, /limit of your Cloudflare plan/);
      assert.match(r.output, /running `npm run deploy` again goes on from there/);
      assert.deepEqual(uploads(api), [], "nothing was uploaded");
      // Once there is room, the same command goes on: the queues made before are not made again.
      const retry = await deploy(api, project);
      assert.equal(retry.code, 0, retry.output);
      assert.equal(creates(api).filter((c) => c.path.endsWith("/queues")).length, 3);
    } finally {
      await api.close();
    }
    assert.deepEqual(trap.seen, []);
  });
});

const readdirSql = (project) =>
  readdirSync(join(project, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort();
