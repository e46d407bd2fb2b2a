// A throwaway Tern for the benchmark. Same approach as test/support/server.mjs (whose helpers it uses), but the
// database is seeded between applying the migrations and starting the server: the seed goes straight into the D1
// file, which must not be open in a running workerd at the time. The Worker is bundled once up front
// (`wrangler deploy --dry-run`), so editing src/ during a run does not restart workerd under the measurement.
// `entry` bundles another entry module instead of src/index.ts (the benchmark uses bench/worker-entry.js: Tern plus
// queue counters); `vars` are added to the Worker's variables.
//
// Two ways to serve the bundle (`via`, or `--via=` on the command line of whichever bench script runs; default
// "direct"):
// - "direct": Miniflare on its own (bench/direct.mjs, a child node process): one workerd, listening on the bench URL,
//   runs the Worker and the local D1/DO/queue simulators. Requests reach the Worker with nothing in front of it.
// - "wrangler": `wrangler dev --no-bundle`, as before: requests go through wrangler's proxy Worker (a second workerd
//   on the bench URL) to the runtime workerd, which also has the V8 inspector on. bench/cpu.mjs leaves the proxy's
//   process out, but the runtime still does the extra work of being proxied and inspected (bench/README.md).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { applyMigrations, freePort, quietEnv, root, superviseWranglerDev } from "../test/support/server.mjs";
import { nodeBin } from "../scripts/node.mjs";

export { root };
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * @param {{ seed: (persistTo: string, origin: string) => Promise<void> | void, keep?: boolean, log?: boolean, via?: "direct" | "wrangler" }} opts
 * @returns {Promise<{ url: string, pid: number, persistTo: string, snapshot: boolean, via: string, output: () => string, stop: () => Promise<void> }>}
 * `config`: another wrangler config file (bench/soak.mjs writes a copy with its queue settings); default wrangler.toml.
 * `d1Apart`: serve local D1 from its own process (bench/d1-host.mjs; the entry must use bench/d1-remote.js), so the
 * measured workerd's CPU is the Worker's without SQLite (direct server only).
 * `dosApart` / `queuesApart`: serve the Durable Objects / run the queues (broker and consumer relay) in another process
 * too (bench/services-host.mjs, the same bundle; the entry must use bench/do-remote.js and bench/queue-remote.js when
 * the variables BENCH_DOS_APART / BENCH_QUEUES_APART say so; implies d1Apart), so the measured workerd's CPU leaves
 * them out. `servicesPid` (returned) is that process.
 * `inspect`: the direct server's workerd runs with the V8 inspector on `inspectorPort` (returned) and the bundle is not
 * minified, so bench/inspector.mjs can profile Tern's isolate with readable names (bench/day.mjs --profile, --alloc).
 * `migrationsDir`: the schema to apply (default migrations/): bench/day.mjs --src gives the before commit's own.
 * `pid`: the node process started (wrangler, or bench/direct.mjs); the workerd processes under it are its children
 * (bench/cpu.mjs `workerdPids(pid, port)` picks the one running the Worker).
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
  via = benchVia(),
  d1Apart = false,
  dosApart = false,
  queuesApart = false,
  inspect = false,
  migrationsDir = null,
}) {
  if (dosApart || queuesApart) d1Apart = true;
  if (via !== "direct" && via !== "wrangler") throw new Error(`startBenchServer: via must be "direct" or "wrangler", not ${JSON.stringify(via)}`);
  const configPath = config ?? join(root, "wrangler.toml");
  const persistTo = mkdtempSync(join(tmpdir(), "tern-bench-"));
  applyMigrations(persistTo, migrationsDir);
  let script = null;
  if (snapshot) {
    const outdir = join(persistTo, "build");
    const named = entry ? [entry, "--config", configPath] : [];
    const minify = inspect ? ["--no-minify"] : [];
    const r = spawnSync(nodeBin, [wranglerBin, "deploy", ...named, ...minify, "--dry-run", "--outdir", outdir], {
      cwd: root,
      env: quietEnv,
      encoding: "utf8",
    });
    const built = entry ? join(outdir, basename(entry).replace(/\.[jt]s$/, ".js")) : join(outdir, "index.js");
    if (r.status === 0 && existsSync(built)) script = built;
    else console.error(`[bench] bundling failed, serving src/ directly:\n${r.stdout}\n${r.stderr}`);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await seed(persistTo, url);

  const vars = { REGISTRATIONS_MODE: "open", SETUP_TOKEN: "bench", SECRET_KEY_BASE: "bench", ...extraVars };
  const cleanup = () => {
    if (!keep) rmSync(persistTo, { recursive: true, force: true });
  };
  // Miniflare runs a bundle only; without one (bundling failed, or snapshot: false) wrangler dev builds src/ itself.
  if (via === "direct" && !script) console.error("[bench] no bundle to give Miniflare: serving through wrangler dev");
  if (d1Apart && !(via === "direct" && script)) throw new Error("startBenchServer: d1Apart needs the direct server and a bundle");
  if (inspect && !(via === "direct" && script)) throw new Error("startBenchServer: inspect needs the direct server and a bundle");
  if (via === "direct" && script) {
    // d1Apart: local D1 served by another process (bench/d1-host.mjs), so this workerd's CPU leaves SQLite out.
    let d1 = null;
    if (d1Apart) {
      const d1Port = await freePort();
      const d1Input = JSON.stringify({ config: configPath, persistTo, port: d1Port });
      d1 = await superviseWranglerDev([join(root, "bench", "d1-host.mjs"), d1Input], { url: `http://127.0.0.1:${d1Port}`, probePath: "/", timeoutMs, log });
      d1.address = `127.0.0.1:${d1Port}`;
    }
    // dosApart / queuesApart: another process running the same bundle (bench/services-host.mjs) serves the objects and
    // runs the queues, relaying their batches to this Worker at `port`.
    let services = null;
    if (dosApart || queuesApart) {
      const sPort = await freePort();
      const main = queuesApart ? `127.0.0.1:${port}` : null;
      const sInput = JSON.stringify({ script, config: configPath, port: sPort, persistTo, vars, d1Host: d1.address, main });
      services = await superviseWranglerDev([join(root, "bench", "services-host.mjs"), sInput], {
        url: `http://127.0.0.1:${sPort}`,
        probePath: "/bench-noop",
        timeoutMs,
        log,
      });
      services.address = `127.0.0.1:${sPort}`;
      if (dosApart) vars.BENCH_DOS_APART = "1";
      if (queuesApart) vars.BENCH_QUEUES_APART = "1";
    }
    const inspectorPort = inspect ? await freePort() : undefined;
    const input = JSON.stringify({
      script,
      config: configPath,
      port,
      persistTo,
      vars,
      log,
      d1Host: d1?.address ?? null,
      servicesHost: services?.address ?? null,
      consumeQueues: !queuesApart,
      inspectorPort,
    });
    // superviseWranglerDev runs any `node <args>` the same way: own process group, output kept, probe until it answers.
    const server = await superviseWranglerDev([join(root, "bench", "direct.mjs"), input], { url, probePath: "/bench-noop", timeoutMs, log, cleanup });
    const stop = async () => {
      await server.stop();
      await services?.stop();
      await d1?.stop();
    };
    return { url, pid: server.pid, servicesPid: services?.pid ?? null, persistTo, snapshot: true, via, output: server.output, stop, inspectorPort };
  }

  const inspectorPort = await freePort();
  const args = [
    wranglerBin,
    "dev",
    // The config must be named: with a script argument wrangler would look for one next to the script instead.
    // Without a bundle (snapshot: false), wrangler builds `entry` (or the config's main) itself and watches what it
    // imports, as `npm run dev` does: an edit to src/ during the run reloads the Worker (bench/soak.mjs --watch).
    ...(script ? [script, "--no-bundle", "--config", configPath] : entry ? [entry, "--config", configPath] : []),
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
    cleanup,
  });
  return { url, pid: server.pid, persistTo, snapshot: !!script, via: "wrangler", output: server.output, stop: server.stop };
}

/** `--via=direct|wrangler` from the command line of the bench script that runs, else TERN_BENCH_VIA, else "direct". */
export function benchVia() {
  const arg = process.argv.find((a) => a.startsWith("--via="))?.slice("--via=".length);
  return arg || process.env.TERN_BENCH_VIA || "direct";
}
