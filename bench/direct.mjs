// The bench's Tern served by Miniflare directly, without `wrangler dev` (bench/server.mjs starts this file as its own
// process: `node bench/direct.mjs '<json>'`). wrangler dev puts a proxy Worker (in a second workerd) and an inspector
// proxy in front of the Worker and starts the runtime with the V8 inspector on; here the only server is one workerd
// whose entry socket is the benchmark's URL, so that process's CPU is the Worker's own (Miniflare's entry router,
// the Worker, and the local D1 / Durable Object / queue simulators, which run in the same workerd).
//
// The Worker's options come from the wrangler config (`unstable_getMiniflareWorkerOptions`: vars, D1, R2, Durable
// Objects, queue producers and consumers with their batch settings), the script is the bundle bench/server.mjs built
// (`wrangler deploy --dry-run`), and state lives where `wrangler dev --persist-to <dir>` keeps it (`<dir>/v3/d1`,
// `<dir>/v3/do`, ...), so the D1 file the bench migrated and seeded is the one this workerd opens.
// Input (argv[2], JSON): { script, config, port, persistTo, vars, d1Host, servicesHost, consumeQueues, inspectorPort }. Stops (disposing workerd) on SIGTERM or SIGINT.
import { LogLevel } from "miniflare";
import { serveUntilSignal, ternMiniflare } from "./miniflare.mjs";

const {
  script,
  config,
  port,
  persistTo,
  vars = {},
  log = false,
  d1Host = null,
  servicesHost = null,
  consumeQueues = true,
  inspectorPort,
} = JSON.parse(process.argv[2]);
const mf = ternMiniflare({
  script,
  config,
  port,
  persistTo,
  vars,
  d1Host,
  servicesHost,
  consumeQueues,
  inspectorPort,
  logLevel: log ? LogLevel.INFO : LogLevel.WARN,
});

await serveUntilSignal(mf, "direct");
