// A Tern under `wrangler dev` for the benchmark. Same approach as test/support/server.mjs (whose helpers it uses),
// but the database is seeded between applying the migrations and starting the server: the seed goes straight into
// the D1 file, which must not be open in a running workerd at the time. The Worker is bundled once up front
// (`wrangler deploy --dry-run`) and served with --no-bundle, so editing src/ during a run does not restart workerd
// under the measurement. `entry` bundles another entry module instead of src/index.ts (the benchmark uses
// bench/worker-entry.js: Tern plus queue counters); `vars` are added to the Worker's variables.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { applyMigrations, freePort, quietEnv, root, superviseWranglerDev } from "../test/support/server.mjs";

export { root };
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * @param {{ seed: (persistTo: string, origin: string) => Promise<void> | void, keep?: boolean, log?: boolean }} opts
 * @returns {Promise<{ url: string, pid: number, persistTo: string, output: () => string, stop: () => Promise<void> }>}
 * `config`: another wrangler config file (bench/soak.mjs writes a copy with its queue settings); default wrangler.toml.
 */
export async function startBenchServer({
  seed,
  keep = false,
  log = false,
  snapshot = true,
  entry = null,
  vars: extraVars = {},
  timeoutMs = 90_000,
  config = null,
}) {
  const configPath = config ?? join(root, "wrangler.toml");
  const persistTo = mkdtempSync(join(tmpdir(), "tern-bench-"));
  applyMigrations(persistTo);
  let script = null;
  if (snapshot) {
    const outdir = join(persistTo, "build");
    const named = entry ? [entry, "--config", configPath] : [];
    const r = spawnSync(process.execPath, [wranglerBin, "deploy", ...named, "--dry-run", "--outdir", outdir], { cwd: root, env: quietEnv, encoding: "utf8" });
    const built = entry ? join(outdir, basename(entry).replace(/\.[jt]s$/, ".js")) : join(outdir, "index.js");
    if (r.status === 0 && existsSync(built)) script = built;
    else console.error(`[bench] bundling failed, serving src/ directly:\n${r.stdout}\n${r.stderr}`);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await seed(persistTo, url);

  const inspectorPort = await freePort();
  const vars = { REGISTRATIONS_MODE: "open", SETUP_TOKEN: "bench", SECRET_KEY_BASE: "bench", ...extraVars };
  const args = [
    wranglerBin,
    "dev",
    // The config must be named: with a script argument wrangler would look for one next to the script instead.
    ...(script ? [script, "--no-bundle", "--config", configPath] : []),
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    persistTo,
    "--show-interactive-dev-session=false",
    // Request logging costs CPU in wrangler's node process on the same cores; keep it quiet.
    "--log-level",
    log ? "log" : "warn",
  ];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const server = await superviseWranglerDev(args, {
    url,
    probePath: "/bench-noop",
    timeoutMs,
    log,
    cleanup: () => {
      if (!keep) rmSync(persistTo, { recursive: true, force: true });
    },
  });
  return { url, pid: server.pid, persistTo, snapshot: !!script, output: server.output, stop: server.stop };
}
