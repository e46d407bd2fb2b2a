// Tern bundled as for deployment and served by Miniflare, for the benches that drive one workerd directly:
// bench/direct.mjs (a child process of bench/server.mjs), bench/profile.mjs and bench/cold.mjs (in their own process).
// The Worker's options come from the wrangler config (`unstable_getMiniflareWorkerOptions`: vars, D1, R2, Durable
// Objects, queue producers and consumers), the script is a `wrangler deploy --dry-run` bundle, and state lives under
// `<persistTo>/v3` as `wrangler dev --persist-to <persistTo>` keeps it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { root } from "../test/support/server.mjs";

/** Bundles src/ into `outdir` (`--no-minify` with `minify: false`, so profiles name functions); the script's path. */
export function bundleTern(outdir, { minify = true } = {}) {
  const args = [join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", outdir, ...(minify ? [] : ["--no-minify"])];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } });
  if (r.status !== 0) throw new Error(`wrangler deploy --dry-run failed: ${r.stderr}`);
  return join(outdir, "index.js");
}

/**
 * A Miniflare serving `script` with the config's bindings and `vars` on top; not started until `await mf.ready`.
 * `d1Host`: the address of a bench/d1-host.mjs process, bound as the service D1_REMOTE (bench/day.mjs --d1-apart).
 * `servicesHost`: the address of a bench/services-host.mjs process, bound as the service SERVICES_REMOTE (bench/day.mjs
 * --dos-apart, --queues-apart). `consumeQueues: false`: the Worker consumes no queue (the services host, whose relay
 * Worker does; and the measured Worker when its queues are apart). `extraWorkers`: more Workers in the same Miniflare.
 */
export function ternMiniflare({
  script,
  persistTo,
  port,
  inspectorPort,
  vars = {},
  logLevel = LogLevel.WARN,
  config = join(root, "wrangler.toml"),
  d1Host = null,
  servicesHost = null,
  consumeQueues = true,
  extraWorkers = [],
}) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  const services = { ...workerOptions.serviceBindings };
  // d1Host / servicesHost ("127.0.0.1:port"): bench/d1-host.mjs and bench/services-host.mjs in other processes, bound as
  // D1_REMOTE (bench/d1-remote.js) and SERVICES_REMOTE (bench/do-remote.js, bench/queue-remote.js).
  if (d1Host) services.D1_REMOTE = { external: { address: d1Host, http: {} } };
  if (servicesHost) services.SERVICES_REMOTE = { external: { address: servicesHost, http: {} } };
  // The Worker's name keys its Durable Objects' storage (`<name>-<class>`), as under wrangler dev.
  const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(config, "utf8"))?.[1] ?? "worker";
  return new Miniflare({
    host: "127.0.0.1",
    port,
    inspectorPort,
    defaultPersistRoot: join(persistTo, "v3"),
    // wrangler dev's runtime logs no requests either (a log line per request is a loopback call to this process).
    logRequests: false,
    log: new Log(logLevel),
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
  });
}

/** One API call as a client makes it (a form body when `form` is given); the status and the parsed body. */
export async function apiCall(url, path, { form, token } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (form) headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await fetch(url + path, { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : undefined });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

/** Registers an app, signs `username` up through it (registrations open) and returns the user's token. */
export async function signUp(url, username) {
  const scopes = "read write";
  const app = (await apiCall(url, "/api/v1/apps", { form: { client_name: username, redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes } })).body;
  const grant = { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: scopes };
  const appToken = (await apiCall(url, "/oauth/token", { form: grant })).body.access_token;
  const form = { username, email: `${username}@example.com`, password: "correct horse battery", agreement: "true", locale: "en" };
  const token = (await apiCall(url, "/api/v1/accounts", { form, token: appToken })).body.access_token;
  if (!token) throw new Error(`sign-up of ${username} gave no token`);
  return token;
}

/** For a Miniflare run as its own process (direct.mjs, d1-host.mjs): disposed on SIGTERM or SIGINT, then exits; logs when ready. */
export async function serveUntilSignal(mf, label) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await mf.dispose();
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  const url = await mf.ready;
  console.log(`[${label}] Miniflare ready at ${url.href}`);
  return url;
}
