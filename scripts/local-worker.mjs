// Tern as one local workerd without wrangler's dev proxy: a `wrangler deploy --dry-run` bundle of src/ served by
// Miniflare with the bindings of wrangler.toml (`unstable_getMiniflareWorkerOptions`: vars, D1, R2, Durable Objects,
// queue producers and consumers). State lives under `<persistTo>/v3`, as `wrangler dev --persist-to <persistTo>` keeps
// it. Used by `npm run dev` (scripts/dev-server.mjs) and the benchmarks (bench/miniflare.mjs).
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { fileURLToPath } from "node:url";
import { nodeBin } from "./node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Bundles src/ into `outdir` (`--no-minify` with `minify: false`, so profiles name functions); the script's path. */
export function bundleTern(outdir, { minify = true } = {}) {
  const args = [join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir, ...(minify ? [] : ["--no-minify"])];
  const r = spawnSync(nodeBin, args, { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } });
  if (r.status !== 0) throw new Error(`wrangler deploy --dry-run failed: ${r.stderr}`);
  return join(outdir, "index.js");
}

/**
 * bundleTern without blocking this process (a server keeps answering while it rebuilds): resolves with the script's
 * path, or rejects with wrangler's error output.
 */
export function bundleTernAsync(outdir, { minify = true } = {}) {
  const args = [join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir, ...(minify ? [] : ["--no-minify"])];
  const child = spawn(nodeBin, args, { cwd: root, env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(join(outdir, "index.js")) : reject(new Error(out.trim() || `wrangler exited with ${code}`))));
  });
}

/**
 * The options of a Miniflare serving `script` on `host`:`port` with the config's bindings (read from `config` on
 * every call) and `vars` on top.
 * `d1Host`: the address of a bench/d1-host.mjs process, bound as the service D1_REMOTE (bench/day.mjs --d1-apart).
 * `servicesHost`: the address of a bench/services-host.mjs process, bound as the service SERVICES_REMOTE (bench/day.mjs
 * --dos-apart, --queues-apart). `consumeQueues: false`: the Worker consumes no queue (the services host, whose relay
 * Worker does; and the measured Worker when its queues are apart). `extraWorkers`: more Workers in the same Miniflare.
 * `handleRuntimeStdio(stdout, stderr)`: where workerd's output goes (Miniflare's default prints it on this process's).
 */
export function ternMiniflareOptions({
  script,
  persistTo,
  host = "127.0.0.1",
  port,
  inspectorPort,
  vars = {},
  logLevel = LogLevel.WARN,
  config = join(root, "wrangler.toml"),
  d1Host = null,
  servicesHost = null,
  consumeQueues = true,
  extraWorkers = [],
  handleRuntimeStdio,
}) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  // wrangler names every field of a send_email binding, unset ones as undefined, and this miniflare (older than
  // wrangler's own) turns an undefined field into a JSON binding without a value, which workerd refuses at start
  // ("allowed_sender_addresses does not specify any binding value").
  if (workerOptions.email?.send_email) {
    workerOptions.email = {
      ...workerOptions.email,
      send_email: workerOptions.email.send_email.map((b) => Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined))),
    };
  }
  const services = { ...workerOptions.serviceBindings };
  // d1Host / servicesHost ("127.0.0.1:port"): bench/d1-host.mjs and bench/services-host.mjs in other processes, bound as
  // D1_REMOTE (bench/d1-remote.js) and SERVICES_REMOTE (bench/do-remote.js, bench/queue-remote.js).
  if (d1Host) services.D1_REMOTE = { external: { address: d1Host, http: {} } };
  if (servicesHost) services.SERVICES_REMOTE = { external: { address: servicesHost, http: {} } };
  // The Worker's name keys its Durable Objects' storage (`<name>-<class>`), as under wrangler dev.
  const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(config, "utf8"))?.[1] ?? "worker";
  return {
    host,
    port,
    inspectorPort,
    defaultPersistRoot: join(persistTo, "v3"),
    // wrangler dev's runtime logs no requests either (a log line per request is a loopback call to this process).
    logRequests: false,
    // No fetch of Cloudflare's `request.cf` sample from the internet at start: a fixed placeholder (Tern reads none of it).
    cf: false,
    log: new Log(logLevel),
    ...(handleRuntimeStdio ? { handleRuntimeStdio } : {}),
    workers: [
      {
        ...workerOptions,
        name,
        modules: true,
        scriptPath: script,
        modulesRoot: dirname(script),
        bindings: { ...workerOptions.bindings, ...vars },
        serviceBindings: services,
        ...(consumeQueues ? {} : { queueConsumers: undefined }),
      },
      ...extraWorkers,
    ],
  };
}

/** ternMiniflareOptions(opts) served: not started until `await mf.ready`. */
export const ternMiniflare = (opts) => new Miniflare(ternMiniflareOptions(opts));
