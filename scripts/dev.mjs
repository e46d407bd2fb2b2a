#!/usr/bin/env node
// `npm run dev`: the one command to run Tern locally. Creates .dev.vars with fresh secrets on first run, applies the
// D1 migrations to the local state under .wrangler/, then starts `wrangler dev` with open registrations and rows
// read/written in Server-Timing.
//   PORT=9000 npm run dev            another port
//   npm run dev -- --ip 0.0.0.0      extra arguments go to `wrangler dev`
//   npm run dev -- --snapshot        serve a build of src/ as it is now, for load tests (see below)
//
// `wrangler dev` rebuilds and restarts the Worker whenever a file it imports is saved: requests in flight at that moment
// fail (wrangler answers a POST with 503 "Your worker restarted mid-request"; it retries a GET), and everything the old
// runtime held in memory is gone. It also puts a proxy workerd in front of the Worker, with an inspector proxy that
// keeps every inspector event of the runtime (a copy of every D1 result among them) until DevTools attaches: that
// process only grows. --snapshot bundles src/ once (`wrangler deploy --dry-run`) and serves the bundle with Miniflare
// alone (bench/miniflare.mjs, as the benchmarks do): edits do not restart it, no proxy, no inspector; same local state
// (.wrangler/state, or --persist-to), same variables. Other wrangler flags do not apply; crons do not run (nor under
// wrangler dev). bench/README.md, "Soak".
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync, appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const devVarsPath = join(root, ".dev.vars");
const snapshot = process.argv.includes("--snapshot");
const extra = process.argv.slice(2).filter((a) => a !== "--snapshot");

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
const migrateArgs = [wranglerBin, "d1", "migrations", "apply", "DB", "--local"];
if (persistTo) migrateArgs.push("--persist-to", persistTo);
console.log("› Applying D1 migrations to the local database…");
const mig = spawnSync(process.execPath, migrateArgs, {
  cwd: root,
  env: { ...quiet, CI: "true" },
  input: "y\n",
  encoding: "utf8",
});
if (mig.status !== 0) {
  process.stdout.write(mig.stdout ?? "");
  process.stderr.write(mig.stderr ?? "");
  die("applying migrations failed (see above)");
}
const applied = (mig.stdout.match(/(\d+) commands executed successfully/g) ?? []).length;
console.log(applied ? `  applied ${applied} migration file(s)` : "  already up to date");

// 4. wrangler dev.
const port = argValue(extra, "--port") ?? process.env.PORT ?? "8787";
const args = [wranglerBin, "dev"];
if (!argValue(extra, "--port")) args.push("--port", String(port));
// DEV_SERVER_TIMING: every response's Server-Timing also carries the D1 statements, rows read and rows written
// (d1q, d1r, d1w; src/lib/d1-counter.ts). Never set in production unless an operator asks for it.
args.push("--var", "REGISTRATIONS_MODE:open", "--var", "DEV_SERVER_TIMING:true", ...extra);

// Miniflare (--snapshot) listens on 127.0.0.1 only.
const base = `http://${snapshot ? "127.0.0.1" : "localhost"}:${port}`;
const ip = argValue(extra, "--ip");
const probeHost = snapshot ? "127.0.0.1" : !ip || ip === "0.0.0.0" || ip === "*" ? "localhost" : ip.includes(":") ? `[${ip}]` : ip;
const banner = [
  "",
  "──────────────────────────────────────────────────────────────────────",
  `  Tern is running at ${base}`,
  `  Create the first admin: ${base}/setup?token=${devVars.SETUP_TOKEN}`,
  "  Registrations are open; local state lives in .wrangler/ (delete it to start over).",
  "──────────────────────────────────────────────────────────────────────",
  "",
].join("\n");

const child = snapshot ? await serveSnapshot() : startWranglerDev();

function startWranglerDev() {
  console.log(`› Starting wrangler dev on port ${port}…`);
  return spawn(process.execPath, args, { cwd: root, env: quiet, stdio: "inherit" });
}

/** --snapshot: the bundle of src/ as it is now, served by Miniflare alone; a stand-in for the child process. */
async function serveSnapshot() {
  for (let i = 0; i < extra.length; i++) {
    if (/^--(port|persist-to)=/.test(extra[i])) continue;
    if (/^--(port|persist-to)$/.test(extra[i])) i++;
    else die(`--snapshot takes only --port and --persist-to, not ${extra[i]}`);
  }
  const { bundleTern, ternMiniflare } = await import("../bench/miniflare.mjs");
  const { LogLevel } = await import("miniflare");
  console.log("› Bundling src/ (wrangler deploy --dry-run)…");
  const script = bundleTern(mkdtempSync(join(tmpdir(), "tern-dev-snapshot-")));
  const mf = ternMiniflare({
    script,
    port: Number(port),
    persistTo: persistTo ?? join(root, ".wrangler", "state"),
    vars: { ...devVars, REGISTRATIONS_MODE: "open", DEV_SERVER_TIMING: "true" },
    logLevel: LogLevel.INFO,
  });
  console.log(`› Serving that build with Miniflare on port ${port} (edits to src/ do not restart it)…`);
  await mf.ready;
  // What the code below expects of the child: exitCode, kill(), and an "exit" event.
  let exit = () => {};
  return {
    exitCode: null,
    kill() {
      mf.dispose().finally(() => exit(0));
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
      const res = await fetch(`http://${probeHost}:${port}/api/v1/instance`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  if (stopping) return;
  // /setup answers 404 once an owner exists; then the link would only confuse.
  const setup = await fetch(`http://${probeHost}:${port}/setup?token=${devVars.SETUP_TOKEN}`).catch(() => null);
  await setup?.arrayBuffer();
  console.log(setup?.status === 404 ? banner.replace(/Create the first admin: .*/, `An owner exists already: sign in at ${base}/`) : banner);
})();

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    stopping = true;
    if (child.exitCode === null) child.kill(sig);
  });
}
child.on("exit", (code, signal) => {
  stopping = true;
  process.exit(code ?? (signal ? 0 : 1));
});
