// Starts a throwaway Tern under `wrangler dev` for the e2e and browser tests: fresh state in a temp directory,
// migrations applied there, a free port on 127.0.0.1. Nothing is written into the repository's own state.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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

export function applyMigrations(persistTo) {
  const args = [wranglerBin, "d1", "migrations", "apply", "DB", "--local"];
  if (persistTo) args.push("--persist-to", persistTo);
  const r = spawnSync(process.execPath, args, { cwd: root, env: quietEnv, input: "y\n", encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`wrangler d1 migrations apply failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns `node <args>` (a `wrangler dev` command line) in its own process group, keeps the last of its output, and
 * waits until `url + probePath` answers anything. `stop()` takes the group down (workerd children included) and then
 * runs `cleanup`. Shared by the e2e server here and the benchmark's (bench/server.mjs).
 * @returns {Promise<{ pid: number, output: () => string, stop: () => Promise<void> }>}
 */
export async function superviseWranglerDev(args, { url, probePath, timeoutMs, log = false, cleanup = () => {} }) {
  const child = spawn(process.execPath, args, {
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
  child.on("exit", (code, signal) => (exited = { code, signal }));

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
      for (let i = 0; i < 50 && !exited; i++) await sleep(100);
    }
    // workerd children may outlive the wrangler node process briefly.
    killGroup("SIGKILL");
    cleanup();
  };

  const deadline = Date.now() + timeoutMs;
  while (true) {
    if (exited) {
      await stop();
      throw new Error(`wrangler dev exited early (${JSON.stringify(exited)}):\n${out}`);
    }
    try {
      const res = await fetch(`${url}${probePath}`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Tern did not answer at ${url} within ${timeoutMs} ms:\n${out}`);
    }
    await sleep(250);
  }
  return { pid: child.pid, output: () => out, stop };
}

/**
 * @param {{ port?: number, vars?: Record<string, string>, timeoutMs?: number, log?: boolean }} [opts]
 * @returns {Promise<{ url: string, port: number, persistTo: string, output: () => string, stop: () => Promise<void> }>}
 */
export async function startTern({ port, vars = {}, timeoutMs = 60_000, log = !!process.env.TERN_E2E_LOG } = {}) {
  const persistTo = mkdtempSync(join(tmpdir(), "tern-e2e-"));
  applyMigrations(persistTo);

  port ??= await freePort();
  // Parallel wrangler processes (other test files, `npm run dev`) would fight over the default inspector port 9229.
  const inspectorPort = await freePort();
  const allVars = {
    REGISTRATIONS_MODE: "open",
    SETUP_TOKEN: "e2e-setup",
    SECRET_KEY_BASE: "e2e-secret",
    ...vars,
  };
  // An explicit (empty) env file stops wrangler from loading the developer's .dev.vars: tests see only `vars`.
  const envFile = join(persistTo, "empty.env");
  writeFileSync(envFile, "");
  const args = [
    wranglerBin,
    "dev",
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
  // Any HTTP answer from the Worker means it is up (the route may still be a 404 while it is being built).
  const server = await superviseWranglerDev(args, {
    url,
    probePath: "/api/v1/instance",
    timeoutMs,
    log,
    cleanup: () => rmSync(persistTo, { recursive: true, force: true }),
  });
  return { url, port, persistTo, output: server.output, stop: server.stop };
}
