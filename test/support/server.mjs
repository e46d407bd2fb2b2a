// Starts a throwaway Tern under `wrangler dev` for the e2e and browser tests: fresh state in a temp directory,
// migrations applied there, a free port on 127.0.0.1. Nothing is written into the repository's own state.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, setGlobalDispatcher } from "undici";
import { nodeBin } from "../../scripts/node.mjs";

// This process's fetch (masto's too) keeps an idle connection 1 s, not undici's 4 s. wrangler dev's front (workerd)
// closes one idle for 5 s, and undici's keep-alive timers tick once a second, later still on a loaded machine: a request
// sent on a connection the server was closing just then failed with "other side closed" (a POST is never retried).
setGlobalDispatcher(new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 }));

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");

// No prompts, no telemetry, no update checks: tests run offline and unattended.
export const quietEnv = {
  ...process.env,
  CI: "true",
  WRANGLER_SEND_METRICS: "false",
  NO_UPDATE_NOTIFIER: "1",
  // miniflare otherwise downloads a sample `request.cf` object from workers.cloudflare.com.
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  FORCE_COLOR: "0",
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** migrations/ into the local D1 under `persistTo`, as `wrangler d1 migrations apply --local` (scripts/local-migrations.mjs). */
export function applyMigrations(persistTo, migrationsDir = null) {
  const args = [join(root, "scripts", "local-migrations.mjs")];
  if (persistTo) args.push("--persist-to", persistTo);
  if (migrationsDir) args.push("--migrations-dir", migrationsDir);
  const r = spawnSync(nodeBin, args, { cwd: root, env: quietEnv, encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`applying the migrations failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns `node <args>` (a `wrangler dev` command line) in its own process group, keeps the last of its output, and
 * waits until `url + probePath` answers as `ready` says (by default: anything). `stop()` takes the group down (workerd
 * children included) and then runs `cleanup`. Shared by the e2e server here and the benchmark's (bench/server.mjs).
 * @param {{ url: string, probePath: string, timeoutMs: number, log?: boolean, cleanup?: () => void, ready?: (res: Response) => boolean }} opts
 * @returns {Promise<{ pid: number, output: () => string, stop: () => Promise<void> }>}
 */
export async function superviseWranglerDev(args, { url, probePath, timeoutMs, log = false, cleanup = () => {}, ready = () => true }) {
  const child = spawn(nodeBin, args, {
    cwd: root,
    env: quietEnv,
    detached: true, // own process group: stop() takes workerd down with it
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const collect = (chunk) => {
    out += chunk;
    if (out.length > 200_000) out = out.slice(-100_000);
    if (log) process.stderr.write(chunk);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  let exited = null;
  const exit = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );

  const killGroup = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      /* already gone */
    }
  };
  const onExit = () => killGroup("SIGKILL");
  process.on("exit", onExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", onExit);
    if (!exited) {
      killGroup("SIGTERM");
      await Promise.race([exit, sleep(5000)]); // a clean exit, or SIGKILL after 5 s
    }
    // workerd children may outlive the wrangler node process briefly.
    killGroup("SIGKILL");
    cleanup();
  };

  // Ready = the Worker answers an HTTP request. Until wrangler listens, a probe is refused at once (then we try again
  // shortly: nothing announces the port at --log-level warn); once it listens, the first request may take long on a
  // busy machine (the Worker is built and started on demand), so a probe that connected is never cut short.
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      await stop();
      throw new Error(`Tern did not answer at ${url} within ${timeoutMs} ms:\n${out}`);
    }
    const probe = fetch(`${url}${probePath}`, { signal: AbortSignal.timeout(remaining) }).then(
      async (res) => {
        await res.arrayBuffer();
        return ready(res) ? "up" : "not yet";
      },
      () => "refused",
    );
    const state = await Promise.race([probe, exit.then(() => "exited")]);
    if (state === "up") break;
    if (state === "exited") {
      await stop();
      throw new Error(`wrangler dev exited early (${JSON.stringify(exited)}):\n${out}`);
    }
    await Promise.race([sleep(250), exit]);
  }
  return { pid: child.pid, output: () => out, stop };
}

/**
 * Local state with every migration applied, made once per set of migrations (and wrangler.toml) and copied for each
 * server: `wrangler d1 migrations apply` is a whole wrangler process (several seconds of CPU), the copy is a few files.
 * The template is built in a scratch directory and renamed into place, so concurrent test processes never see half of
 * one; a process that loses the race uses the winner's.
 */
function migratedTemplate() {
  const hash = createHash("sha256").update(readFileSync(join(root, "wrangler.toml")));
  const dir = join(root, "migrations");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  for (const f of files.sort()) hash.update(f).update(readFileSync(join(dir, f)));
  const template = join(tmpdir(), `tern-e2e-migrated-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(template)) return template;
  const scratch = mkdtempSync(join(tmpdir(), "tern-e2e-migrating-"));
  try {
    applyMigrations(scratch);
    renameSync(scratch, template);
  } catch (e) {
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(template)) throw e;
  }
  return template;
}

/**
 * wrangler.toml for tests, written into `dir`: relative paths made absolute (wrangler reads them relative to the
 * config file) and every queue consumer's max_batch_timeout set to 0. Production waits up to 1 s to fill a batch; in
 * a test each hop through JOBS or DELIVERY then costs a second of wall time for nothing (the federation suite makes
 * dozens of hops), so messages are delivered as soon as they are sent, as the vitest config does for the same reason.
 */
function testWranglerConfig(dir) {
  const abs = (p) => JSON.stringify(resolve(root, p));
  const source = readFileSync(join(root, "wrangler.toml"), "utf8");
  if (!/^main\s*=\s*"[^"]+"/m.test(source)) throw new Error('wrangler.toml has no `main = "..."` line to rewrite for the test config');
  const text = source
    .replace(/^(main\s*=\s*)"([^"]+)"/m, (_, key, p) => `${key}${abs(p)}`)
    .replace(/^(\s*migrations_dir\s*=\s*)"([^"]+)"/gm, (_, key, p) => `${key}${abs(p)}`)
    .replace(/^(\s*max_batch_timeout\s*=\s*)[0-9.]+/gm, (_, key) => `${key}0`);
  const file = join(dir, "wrangler.toml");
  writeFileSync(file, text);
  return file;
}

/** The instance document as the Worker serves it: 200 and JSON. */
const instanceAnswered = (res) => res.status === 200 && (res.headers.get("content-type") ?? "").includes("application/json");

/**
 * `cronEveryMs`: fire the crons of wrangler.toml every that many ms, as `npm run dev -- --wrangler` fires them on their
 * minutes (wrangler dev fires none itself): through the runtime's /cdn-cgi/handler/scheduled. Off by default, so a
 * test sees a cron run only when it asks for one.
 * @param {{ port?: number, vars?: Record<string, string>, timeoutMs?: number, log?: boolean, cronEveryMs?: number }} [opts]
 * @returns {Promise<{ url: string, port: number, persistTo: string, output: () => string, stop: () => Promise<void> }>}
 */
export async function startTern({ port: fixedPort, vars = {}, timeoutMs = 120_000, log = !!process.env.TERN_E2E_LOG, cronEveryMs = 0 } = {}) {
  const persistTo = mkdtempSync(join(tmpdir(), "tern-e2e-"));
  try {
    cpSync(migratedTemplate(), persistTo, { recursive: true });
    const configFile = testWranglerConfig(persistTo);
    // An explicit (empty) env file stops wrangler from loading the developer's .dev.vars: tests see only `vars`.
    const envFile = join(persistTo, "empty.env");
    writeFileSync(envFile, "");
    const allVars = {
      REGISTRATIONS_MODE: "open",
      SETUP_TOKEN: "e2e-setup",
      SECRET_KEY_BASE: "e2e-secret",
      ...vars,
    };
    // A free port is only free until someone binds it: other test processes (other engineers' runs, the browser
    // test's callback server) pick ports the same way. wrangler exits with "Address already in use" then; try others.
    for (let attempt = 1; ; attempt++) {
      const port = fixedPort ?? (await freePort());
      // Parallel wrangler processes (other test files, `npm run dev`) would fight over the default inspector port 9229.
      const inspectorPort = await freePort();
      const args = [
        wranglerBin,
        "dev",
        "--config",
        configFile,
        "--env-file",
        envFile,
        "--port",
        String(port),
        "--ip",
        "127.0.0.1",
        "--inspector-port",
        String(inspectorPort),
        "--persist-to",
        persistTo,
        "--show-interactive-dev-session=false",
        "--log-level",
        log ? "log" : "warn",
      ];
      for (const [k, v] of Object.entries(allVars)) args.push("--var", `${k}:${v}`);
      const url = `http://127.0.0.1:${port}`;
      try {
        // Up = the Worker itself answers the instance document (200, JSON). Any answer was taken before, and a run on a
        // busy machine got wrangler's own non-JSON answer to its first API call right after (masto: "unknown encoding").
        const server = await superviseWranglerDev(args, { url, probePath: "/api/v1/instance", timeoutMs, log, ready: instanceAnswered });
        const stopCron = cronEveryMs ? await fireCrons(url, cronEveryMs) : () => {};
        const stop = async () => {
          stopCron();
          await server.stop();
          rmSync(persistTo, { recursive: true, force: true });
        };
        return { url, port, persistTo, output: server.output, stop };
      } catch (e) {
        if (fixedPort !== undefined || attempt >= 3 || !/already in use/i.test(String(e?.message))) throw e;
      }
    }
  } catch (e) {
    rmSync(persistTo, { recursive: true, force: true });
    throw e;
  }
}

/** Fires the crons of wrangler.toml at `url` every `everyMs` (scripts/dev-server.mjs startCron); returns a stop function. */
async function fireCrons(url, everyMs) {
  const { readCrons, startCron } = await import("../../scripts/dev-server.mjs");
  const trigger = async (cron) => {
    const res = await fetch(`${url}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent(cron)}`);
    await res.arrayBuffer();
    return res.ok ? "ok" : `HTTP ${res.status}`;
  };
  return startCron(readCrons(join(root, "wrangler.toml")), trigger, { everyMs, log: (line, { quiet = false } = {}) => !quiet && console.error(line) });
}
