#!/usr/bin/env node
// `npm run deploy`: Tern on your Cloudflare account, after `npx wrangler login`. The first run creates what is missing
// and a later one upgrades; nothing is created twice:
//   - the D1 database and the R2 bucket of wrangler.toml: wrangler's resource provisioning creates them during
//     `wrangler deploy` (wrangler.toml has no database_id; a later deploy finds the database by its name);
//   - the queues of wrangler.toml (producers, consumers, dead-letter queue), created here when missing, because a
//     consumer's dead-letter queue must exist before wrangler attaches the consumer;
//   - the secrets SECRET_KEY_BASE and SETUP_TOKEN, generated and uploaded with the deploy when the Worker has none
//     (`wrangler deploy --secrets-file`; a later deploy keeps them: wrangler never deletes secrets on deploy);
//   - the D1 migrations, applied to the remote database: before the upload on an upgrade (the new code finds its
//     tables), after it on the first deploy (the database exists only once provisioning made it).
// The instance's domain is asked once (or --domain), checked to be a zone of the account, served as the Worker's
// custom domain and set as LOCAL_DOMAIN; it is kept in .wrangler/tern-deploy.json next to wrangler.toml, and a later
// run without that file reads it back from the deployed Worker. Changing the domain of a deployed instance is refused
// (handles and URIs are built from it) unless --change-domain.
//   npm run deploy                          deploy or upgrade (asks the domain on the first run in a terminal)
//   npm run deploy -- --domain social.example
//   npm run deploy -- --new-setup-token     put a new SETUP_TOKEN and print the setup link again
//   npm run deploy -- --config path/to/wrangler.toml
// It talks to the Cloudflare API as wrangler does (CLOUDFLARE_API_BASE_URL, CLOUDFLARE_API_TOKEN and
// CLOUDFLARE_ACCOUNT_ID are honoured; the credentials of `wrangler login` otherwise, through `wrangler auth token`).
// Under Workers Builds (the Deploy to Cloudflare button, WORKERS_CI=1) it asks nothing and deploys with wrangler.toml's
// routes and LOCAL_DOMAIN as they are. Refusals (not logged in, a domain not on the account, a plan limit) say what to do and exit 1.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "./node.mjs";

await runOnRecentNode();

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
function option(name) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i].startsWith(`${name}=`)) return argv[i].slice(name.length + 1);
  }
  return undefined;
}
for (let i = 0; i < argv.length; i++) {
  if (/^--(domain|config)$/.test(argv[i])) i++;
  else if (!/^--(domain|config)=/.test(argv[i]) && !["--new-setup-token", "--change-domain"].includes(argv[i])) {
    refuse(`${argv[i]}: npm run deploy takes --domain NAME, --config FILE, --new-setup-token and --change-domain.`);
  }
}

// A relative --config is taken from where `npm run` was typed (INIT_CWD), not from the project root npm moves to.
const configPath = option("--config") ? resolve(process.env.INIT_CWD ?? process.cwd(), option("--config")) : join(root, "wrangler.toml");
const statePath = join(dirname(configPath), ".wrangler", "tern-deploy.json");
const apiBase = (process.env.CLOUDFLARE_API_BASE_URL ?? "https://api.cloudflare.com/client/v4").replace(/\/$/, "");
const REQUIRED_SECRETS = ["SECRET_KEY_BASE", "SETUP_TOKEN"];
const builds = !!process.env.WORKERS_CI && process.env.WORKERS_CI !== "0";

function refuse(msg) {
  console.error(`\n✖ ${msg}`);
  process.exit(1);
}
const step = (msg) => console.log(`› ${msg}`);
const rerunHint = () => "\n  What was created so far stays; running `npm run deploy` again goes on from there and creates nothing twice.";

/**
 * Runs wrangler with `args`, its output shown as it comes and kept. stdin is closed, so wrangler runs
 * non-interactively: it asks nothing, and writes no provisioned id back into wrangler.toml.
 */
function wrangler(args, { env = {}, show = true } = {}) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [wranglerBin, ...args], {
      cwd: dirname(configPath),
      stdio: ["ignore", "pipe", "pipe"],
      // No metrics, and no banner: the banner's check for a newer wrangler asks the npm registry, and Tern pins its
      // wrangler (an upgrade of Tern brings a newer one).
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false",
        WRANGLER_HIDE_BANNER: process.env.WRANGLER_HIDE_BANNER ?? "true",
        ...env,
      },
    });
    let output = "";
    let stdout = "";
    const take = (to) => (chunk) => {
      output += chunk;
      if (to === process.stdout) stdout += chunk;
      if (show) to.write(chunk);
    };
    child.stdout.on("data", take(process.stdout));
    child.stderr.on("data", take(process.stderr));
    child.on("error", (e) => done({ code: 1, output: `${output}\n${e.message}`, stdout }));
    child.on("close", (code) => done({ code: code ?? 1, output, stdout }));
  });
}

// ── 1. Who is deploying: wrangler's credentials (an API token from the environment, or `wrangler login`'s).
const { readConfig, name: workerName } = await loadConfig();
step("Checking your Cloudflare login…");
const credentials = await readCredentials();
if (!credentials) {
  refuse(
    "You are not logged in to Cloudflare. Run `npx wrangler login` first (or set CLOUDFLARE_API_TOKEN to an API token),\n" +
      "  then `npm run deploy` again. Nothing was created.",
  );
}
const authHeaders =
  credentials.type === "api_key" ? { "X-Auth-Key": credentials.key, "X-Auth-Email": credentials.email } : { Authorization: `Bearer ${credentials.token}` };

/** One Cloudflare API call: `{ ok, status, result, errors }`; an unreachable API refuses at once. */
async function api(method, path, body) {
  let res;
  try {
    res = await fetch(`${apiBase}${path}`, {
      method,
      headers: { ...authHeaders, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (e) {
    refuse(`The Cloudflare API (${apiBase}) could not be reached: ${e.cause?.message ?? e.message}. Check your connection and run it again.`);
  }
  const data = await res.json().catch(() => ({}));
  const errors = data.errors ?? [];
  if (res.status === 401 || errors.some((e) => e.code === 10000 || e.code === 9109)) {
    refuse(
      `Cloudflare refused the login (${describe(errors) || `HTTP ${res.status}`}).\n` +
        "  Run `npx wrangler login` again (or check the permissions of CLOUDFLARE_API_TOKEN), then `npm run deploy`.",
    );
  }
  return { ok: res.ok && data.success !== false, status: res.status, result: data.result, errors };
}
const describe = (errors) => errors.map((e) => `${e.message} [code ${e.code}]`).join("; ");

// ── 2. Which account: CLOUDFLARE_ACCOUNT_ID, wrangler.toml's account_id, or the only one the login can use.
let accountId = process.env.CLOUDFLARE_ACCOUNT_ID || readConfig.account_id;
if (!accountId) {
  const accounts = await api("GET", "/accounts?per_page=50");
  if (!accounts.ok) refuse(`Listing your Cloudflare accounts failed: ${describe(accounts.errors)}.`);
  if (accounts.result.length === 0) refuse("This login has no Cloudflare account. Log in with another one: `npx wrangler login`.");
  if (accounts.result.length > 1) {
    refuse(
      `This login can use ${accounts.result.length} accounts; say which one, e.g.\n` +
        accounts.result.map((a) => `    CLOUDFLARE_ACCOUNT_ID=${a.id} npm run deploy     # ${a.name}`).join("\n"),
    );
  }
  accountId = accounts.result[0].id;
}
const acct = `/accounts/${accountId}`;

// ── 3. The domain: --domain, else the one this checkout deployed before, else the deployed Worker's, else asked.
//    Under Workers Builds (the Deploy to Cloudflare button) nobody can be asked: wrangler.toml's routes and
//    LOCAL_DOMAIN are used as they are (none at first: the Worker answers on its workers.dev address).
let domain;
if (builds) {
  step("Workers Builds: deploying with the routes and LOCAL_DOMAIN of wrangler.toml as they are");
} else {
  const saved = existsSync(statePath) ? JSON.parse(readFileSync(statePath, "utf8")) : {};
  const settings = await api("GET", `${acct}/workers/scripts/${workerName}/settings`);
  const deployed = settings.ok ? settings.result?.bindings?.find((b) => b.name === "LOCAL_DOMAIN" && b.type === "plain_text")?.text || "" : "";
  domain = option("--domain") ?? saved.domain ?? (deployed || undefined);
  if (!domain) {
    if (!process.stdin.isTTY) refuse("Which domain will this instance live on? Run `npm run deploy -- --domain social.example`.");
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    domain = await rl.question("Domain of this instance (a domain or subdomain of a zone on your Cloudflare account, e.g. social.example): ");
    rl.close();
  }
  domain = normalizeDomain(domain);
  if (deployed && domain !== deployed && !flag("--change-domain")) {
    refuse(
      `Tern is deployed on ${deployed}, not ${domain}. Handles and URIs are built from the domain, so changing it cuts the\n` +
        "  instance off from the servers that know it. To do it anyway: `npm run deploy -- --domain NEW --change-domain`.",
    );
  }
}

function normalizeDomain(input) {
  const d = input
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, "")
    .replace(/\/.*$/, "")
    .replace(/\.$/, "");
  const label = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
  if (!new RegExp(`^(?:${label}\\.)+[a-z][a-z0-9-]*[a-z0-9]$`).test(d) || d.length > 253) {
    refuse(`"${input}" is not a domain name. Give one such as social.example (no scheme, no path, no port).`);
  }
  return d;
}

// ── 4. The domain must be a zone of this account (or under one): Cloudflare serves a Worker's custom domain only there.
if (domain) {
  step(`Checking that ${domain} is on your Cloudflare account…`);
  const labels = domain.split(".");
  let zone = null;
  for (let i = 0; i < labels.length - 1 && !zone; i++) {
    const name = labels.slice(i).join(".");
    const found = await api("GET", `/zones?name=${encodeURIComponent(name)}&account.id=${encodeURIComponent(accountId)}`);
    if (!found.ok) refuse(`Looking up the zone ${name} failed: ${describe(found.errors)}.`);
    zone = found.result?.find((z) => z.name === name) ?? null;
  }
  if (!zone) {
    refuse(
      `${domain} is not on this Cloudflare account (account ${accountId}): no zone ${labels
        .slice(0, -1)
        .map((_, i) => labels.slice(i).join("."))
        .join(" or ")}.\n` +
        "  Add the domain to Cloudflare first (dashboard → Add a domain) and wait until it is active, or choose a domain that is.\n" +
        "  Nothing was created.",
    );
  }
  if (zone.status && zone.status !== "active") console.log(`  ⚠ the zone ${zone.name} is ${zone.status}: the custom domain works once it is active`);
  // Kept at once, so that a run that stops further on (a plan limit, a failed build) does not ask again.
  mkdirSync(dirname(statePath), { recursive: true });
  writeFileSync(statePath, `${JSON.stringify({ domain, account_id: accountId }, null, 2)}\n`);
}

// ── 5. Queues: every one wrangler.toml names, created when missing.
const queueNames = [
  ...new Set(
    [
      ...(readConfig.queues?.producers ?? []).map((p) => p.queue),
      ...(readConfig.queues?.consumers ?? []).flatMap((c) => [c.queue, c.dead_letter_queue]),
    ].filter(Boolean),
  ),
];
for (const queue of queueNames) {
  const found = await api("GET", `${acct}/queues?name=${encodeURIComponent(queue)}`);
  if (!found.ok) refuse(`Listing your queues failed: ${describe(found.errors)}.${planHint(found.errors)}`);
  if (found.result?.some((q) => q.queue_name === queue)) continue;
  step(`Creating the queue ${queue}…`);
  const made = await api("POST", `${acct}/queues`, { queue_name: queue });
  if (!made.ok) refuse(`Creating the queue ${queue} failed: ${describe(made.errors)}.${planHint(made.errors)}${rerunHint()}`);
}

/** A hint when Cloudflare's answer is a limit of the account's plan. */
function planHint(errors, text = "") {
  const all = `${describe(errors)} ${text}`;
  // D1's 7406 and R2's 10042 are the codes wrangler's sources and its issues show; the phrases cover other products.
  if (!/code:? (?:7406|10042)\b|maximum number of|exceeded the limit|limit of your|paid (?:workers )?plan|workers paid|upgrade your plan|enable R2/i.test(all))
    return "";
  return (
    "\n  This is a limit of your Cloudflare plan or a product not yet enabled on the account. Free some room (delete what you no\n" +
    `  longer use), enable the product or upgrade the plan in the dashboard (https://dash.cloudflare.com/${accountId}/workers/plans),\n` +
    "  then run `npm run deploy` again."
  );
}

// ── 6. Secrets: generated when the Worker does not have them (a first deploy), uploaded with the deploy below.
const secretList = await api("GET", `${acct}/workers/scripts/${workerName}/secrets`);
const haveSecrets = new Set(secretList.ok ? (secretList.result ?? []).map((s) => s.name) : []);
if (!secretList.ok && !secretList.errors.some((e) => e.code === 10007)) refuse(`Listing the Worker's secrets failed: ${describe(secretList.errors)}.`);
const newSecrets = {};
for (const name of REQUIRED_SECRETS) {
  if (!haveSecrets.has(name) || (name === "SETUP_TOKEN" && flag("--new-setup-token"))) {
    newSecrets[name] = randomBytes(name === "SETUP_TOKEN" ? 16 : 32).toString("hex");
  }
}
const tmp = mkdtempSync(join(tmpdir(), "tern-deploy-"));
const secretsFile = join(tmp, "secrets.json");
if (Object.keys(newSecrets).length) {
  writeFileSync(secretsFile, JSON.stringify(newSecrets), { mode: 0o600 });
  step(`New secrets, uploaded with the Worker: ${Object.keys(newSecrets).join(", ")}`);
}

// ── 7. Migrations and the upload, in the order that keeps the code and the schema in step.
const db = readConfig.d1_databases?.[0];
let failed = null;
try {
  const existing = db ? await api("GET", `${acct}/d1/database/${encodeURIComponent(db.database_id || db.database_name)}`) : null;
  if (existing && !existing.ok && !existing.errors.some((e) => e.code === 7404)) refuse(`Looking up the D1 database failed: ${describe(existing.errors)}.`);
  const firstDeploy = db && !existing.ok;
  if (db && !firstDeploy) failed = await migrate();
  if (!failed) failed = await deploy();
  if (!failed && firstDeploy) failed = await migrate();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (failed) refuse(failed);

async function migrate() {
  step(`Applying the D1 migrations to the database ${db.database_name}…`);
  const r = await wrangler(["d1", "migrations", "apply", db.binding, "--remote", "--config", configPath], { env: { CI: "true" } });
  return r.code === 0 ? null : `Applying the migrations failed (wrangler's message is above).${planHint([], r.output)}${rerunHint()}`;
}

async function deploy() {
  step(domain ? `Deploying ${workerName} on https://${domain}…` : `Deploying ${workerName}…`);
  const args = ["deploy", "--config", configPath];
  if (domain) args.push("--domain", domain, "--var", `LOCAL_DOMAIN:${domain}`);
  if (Object.keys(newSecrets).length) args.push("--secrets-file", secretsFile);
  const r = await wrangler(args);
  return r.code === 0 ? null : `The deploy failed (wrangler's message is above).${planHint([], r.output)}${rerunHint()}`;
}

// ── 8. Where to go.
const origin = domain || readConfig.vars?.LOCAL_DOMAIN ? `https://${domain || readConfig.vars.LOCAL_DOMAIN}` : await workersDevOrigin();
console.log(
  [
    "",
    "──────────────────────────────────────────────────────────────────────",
    `  Tern is deployed at ${origin}.`,
    newSecrets.SETUP_TOKEN
      ? `  Create the owner account: ${origin}/setup?token=${newSecrets.SETUP_TOKEN}`
      : `  Upgraded. The owner's setup link was printed by the first deploy; \`npm run deploy -- --new-setup-token\` makes a new one.`,
    domain && newSecrets.SETUP_TOKEN ? "  A new custom domain can take a few minutes to answer (DNS and its certificate)." : "",
    "──────────────────────────────────────────────────────────────────────",
    "",
  ]
    .filter(Boolean)
    .join("\n"),
);

/**
 * The credentials wrangler itself uses, in its order: CLOUDFLARE_API_TOKEN, CLOUDFLARE_API_KEY with CLOUDFLARE_EMAIL,
 * else the OAuth token of `wrangler login` (through `wrangler auth token`, which refreshes it when it has expired).
 */
async function readCredentials() {
  const env = process.env;
  if (env.CLOUDFLARE_API_TOKEN) return { type: "api_token", token: env.CLOUDFLARE_API_TOKEN };
  if (env.CLOUDFLARE_API_KEY && env.CLOUDFLARE_EMAIL) return { type: "api_key", key: env.CLOUDFLARE_API_KEY, email: env.CLOUDFLARE_EMAIL };
  const auth = await wrangler(["auth", "token", "--json"], { show: false });
  try {
    return auth.code === 0 ? JSON.parse(auth.stdout) : null;
  } catch {
    return null;
  }
}

/** The Worker's workers.dev address (https://<worker>.<account's subdomain>.workers.dev), or a description of it. */
async function workersDevOrigin() {
  const sub = await api("GET", `${acct}/workers/subdomain`);
  return sub.ok && sub.result?.subdomain ? `https://${workerName}.${sub.result.subdomain}.workers.dev` : "<your Worker's workers.dev address>";
}

async function loadConfig() {
  if (!existsSync(configPath)) refuse(`No ${configPath}.`);
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: configPath });
  if (!config.name) refuse(`${configPath} has no Worker name.`);
  return { readConfig: config, name: config.name };
}
