#!/usr/bin/env node
// `npm run dev`: the one command to run Tern locally. Creates .dev.vars with fresh secrets on first run, applies the
// D1 migrations to the local state under .wrangler/, then serves Tern with open registrations and rows read/written in
// Server-Timing: a bundle of src/ served by Miniflare alone (scripts/dev-server.mjs), rebuilt and reloaded when a file
// under src/ is saved, the crons of wrangler.toml fired every minute as on Cloudflare.
//   PORT=9000 npm run dev            another port (or --port 9000)
//   npm run dev -- --ip 0.0.0.0      listen on every interface (default 127.0.0.1)
//   npm run dev -- --persist-to DIR  local state elsewhere than .wrangler/state
//   npm run dev -- --snapshot        no rebuild on edits (load tests while the tree changes)
//   npm run dev -- --log-cron        print every cron run, not only the ones that fail
//   npm run dev -- --wrangler ...    `wrangler dev` instead (the crons fired through its /cdn-cgi/handler/scheduled),
//                                    the other arguments going to it
// Why Miniflare alone rather than `wrangler dev`: its proxy hop answers a POST 503 "Your worker restarted mid-request"
// now and then under load although nothing restarted, and its inspector proxy only grows (scripts/dev-server.mjs).
// TERN_DEV_CRON_MS=N fires the crons every N ms instead of on their minutes (the tests of this script).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "./node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const devVarsPath = join(root, ".dev.vars");
const argv = process.argv.slice(2);
const viaWrangler = argv.includes("--wrangler");
const snapshot = argv.includes("--snapshot");
const logCron = argv.includes("--log-cron");
const extra = argv.filter((a) => !["--wrangler", "--snapshot", "--log-cron"].includes(a));
const cronEveryMs = Number(process.env.TERN_DEV_CRON_MS ?? 0);

function die(msg) {
  console.error(`\n✖ ${msg}`);
  process.exit(1);
}

function argValue(args, name) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

// 1. Dependencies (a fresh clone has none).
if (!existsSync(wranglerBin)) {
  console.log("› Installing dependencies (npm ci)…");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) die("npm ci failed");
}
// wrangler and miniflare need Node 22.12+: on an older Node, this script goes on under the one `npm ci` installed
// (scripts/node.mjs). Under `npm run` it already runs on that one.
await runOnRecentNode();

// 2. Local secrets. Wrangler reads .dev.vars (gitignored) on every start.
function readDevVars() {
  const vars = {};
  if (!existsSync(devVarsPath)) return vars;
  for (const line of readFileSync(devVarsPath, "utf8").split(/\r?\n/)) {
    const m = line.match(/^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/);
    if (m) vars[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return vars;
}

const devVars = readDevVars();
const missing = [];
if (!devVars.SECRET_KEY_BASE) missing.push(["SECRET_KEY_BASE", randomBytes(32).toString("hex")]);
if (!devVars.SETUP_TOKEN) missing.push(["SETUP_TOKEN", randomBytes(16).toString("hex")]);
if (missing.length) {
  const created = !existsSync(devVarsPath);
  const body = missing.map(([k, v]) => `${k}=${v}\n`).join("");
  if (created) {
    writeFileSync(devVarsPath, `# Local secrets for \`npm run dev\` (gitignored). Delete this file to get new ones.\n${body}`);
  } else {
    const cur = readFileSync(devVarsPath, "utf8");
    appendFileSync(devVarsPath, (cur.endsWith("\n") || cur === "" ? "" : "\n") + body);
  }
  for (const [k, v] of missing) devVars[k] = v;
  console.log(`› ${created ? "Created" : "Updated"} .dev.vars (${missing.map(([k]) => k).join(", ")})`);
}

// 3. Migrations, non-interactively, into the same local state `wrangler dev` will use.
const quiet = { ...process.env, WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false" };
const persistTo = argValue(extra, "--persist-to");
console.log("› Applying D1 migrations to the local database…");
let applied;
try {
  // Imported here: on a fresh clone, step 1 has only just installed miniflare and wrangler.
  const { applyLocalMigrations } = await import("./local-migrations.mjs");
  applied = await applyLocalMigrations({ persistTo: persistTo ? resolve(persistTo) : undefined });
} catch (e) {
  die(`applying migrations failed: ${e instanceof Error ? e.message : e}`);
}
console.log(applied.length ? `  applied ${applied.length} migration file(s)` : "  already up to date");

// 4. The server.
const port = argValue(extra, "--port") ?? process.env.PORT ?? "8787";
const ip = argValue(extra, "--ip");
const host = viaWrangler ? (ip ?? "localhost") : (ip ?? "127.0.0.1");
// DEV_SERVER_TIMING: every response's Server-Timing also carries the D1 statements, rows read and rows written
// (d1q, d1r, d1w; src/lib/limits/d1-counter.ts). Never set in production unless an operator asks for it.
const devVarsOn = { REGISTRATIONS_MODE: "open", DEV_SERVER_TIMING: "true" };
const urlHost = (h) => (h === "0.0.0.0" || h === "*" || h === "::" ? "localhost" : h.includes(":") ? `[${h}]` : h);
const base = `http://${urlHost(host)}:${port}`;
const banner = [
  "",
  "──────────────────────────────────────────────────────────────────────",
  `  Tern is running at ${base}`,
  `  Create the first admin: ${base}/setup?token=${devVars.SETUP_TOKEN}`,
  "  Registrations are open; local state lives in .wrangler/ (delete it to start over).",
  "──────────────────────────────────────────────────────────────────────",
  "",
].join("\n");

const child = viaWrangler ? startWranglerDev() : await serveMiniflare();

function startWranglerDev() {
  const args = [wranglerBin, "dev"];
  if (!argValue(extra, "--port")) args.push("--port", String(port));
  for (const [k, v] of Object.entries(devVarsOn)) args.push("--var", `${k}:${v}`);
  args.push(...extra);
  console.log(`› Starting wrangler dev on port ${port}…`);
  const proc = spawn(process.execPath, args, { cwd: root, env: quiet, stdio: "inherit" });
  // wrangler dev fires no cron itself; its runtime runs one on a request to /cdn-cgi/handler/scheduled.
  import("./dev-server.mjs").then(({ readCrons, startCron }) => {
    const crons = readCrons(join(root, "wrangler.toml"));
    const stop = startCron(
      crons,
      async (cron) => {
        const res = await fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent(cron)}`, { signal: AbortSignal.timeout(60_000) });
        await res.arrayBuffer();
        return res.ok ? "ok" : `HTTP ${res.status}`;
      },
      { everyMs: cronEveryMs, log: (line, { quiet = false } = {}) => (!quiet || logCron) && console.log(line) },
    );
    proc.on("exit", stop);
  });
  return proc;
}

/** The default: Miniflare alone (scripts/dev-server.mjs); a stand-in for the child process. */
async function serveMiniflare() {
  for (let i = 0; i < extra.length; i++) {
    if (/^--(port|persist-to|ip)=/.test(extra[i])) continue;
    if (/^--(port|persist-to|ip)$/.test(extra[i])) i++;
    else die(`${extra[i]}: this server takes --port, --ip, --persist-to, --snapshot and --log-cron; for wrangler's flags use --wrangler`);
  }
  const { serveDev } = await import("./dev-server.mjs");
  const { LogLevel } = await import("miniflare");
  const server = await serveDev({
    root,
    host,
    port,
    persistTo: persistTo ?? join(root, ".wrangler", "state"),
    vars: { ...devVars, ...devVarsOn },
    logLevel: LogLevel.INFO,
    watching: !snapshot,
    logCron,
    cronEveryMs,
  });
  console.log(`› Serving with Miniflare on ${base}${snapshot ? " (a snapshot: edits to src/ do not reload it)" : "; saving a file under src/ reloads it"}`);
  // What the code below expects of the child: exitCode, kill(), and an "exit" event.
  let exit = () => {};
  return {
    exitCode: null,
    kill() {
      server.close().finally(() => exit(0));
    },
    on(_event, fn) {
      exit = fn;
    },
  };
}

// Print the links once the Worker answers, so they are not buried in wrangler's start-up output.
let stopping = false;
(async () => {
  while (!stopping) {
    try {
      const res = await fetch(`${base}/api/v1/instance`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  if (stopping) return;
  // /setup answers 404 once an owner exists; then the link would only confuse.
  const setup = await fetch(`${base}/setup?token=${devVars.SETUP_TOKEN}`).catch(() => null);
  await setup?.arrayBuffer();
  console.log(setup?.status === 404 ? banner.replace(/Create the first admin: .*/, `An owner exists already: sign in at ${base}/`) : banner);
})();

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  // This script stops the server itself and exits 0. Miniflare (4.2026-07+) adds a handler that exits 128 + the
  // signal's number before anything is closed; wrangler 4.66, imported here, used to add one exiting 0 first. Neither
  // is wanted: only this one stays.
  process.removeAllListeners(sig);
  process.on(sig, () => {
    stopping = true;
    if (child.exitCode === null) child.kill(sig);
    // A close that hangs (a runtime that no longer answers) does not keep the terminal.
    setTimeout(() => process.exit(0), 15_000).unref();
  });
}
child.on("exit", (code, signal) => {
  stopping = true;
  process.exit(code ?? (signal ? 0 : 1));
});
