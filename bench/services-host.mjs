// Bench only: runs what production runs outside the Worker, in a workerd process apart from the measured one, so that
// process's CPU is the Worker's own (bench/day.mjs --dos-apart, --queues-apart). `node bench/services-host.mjs '<json>'`
// with { script, config, persistTo, port, vars, d1Host, main }: a Miniflare running
// - the same bundle as the bench's Tern (bench/day-entry.js), with the same bindings and persistence directory,
//   consuming no queue: it serves the Durable Objects (bench/do-remote.js's calls, counted as in one process) and
//   takes the messages the measured Worker sends (bench/queue-remote.js), into this process's queue broker;
// - with `main` (the measured workerd's address), a relay Worker consuming Tern's queues with the wrangler config's
//   batch settings, which hands each batch to the measured Worker (bench/queue-remote.js RELAY_SCRIPT).
// `d1Host` is required: one SQLite file is never open in two workerd processes. Stops on SIGTERM or SIGINT.
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { serveUntilSignal, ternMiniflare } from "./miniflare.mjs";
import { RELAY_SCRIPT } from "./queue-remote.js";

const { script, config, port, persistTo, vars = {}, d1Host, main = null } = JSON.parse(process.argv[2]);
if (!d1Host) throw new Error("services-host: needs d1Host (D1 served by bench/d1-host.mjs)");
const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
const relay = main
  ? [
      {
        name: "queue-relay",
        modules: true,
        script: RELAY_SCRIPT,
        compatibilityDate: "2025-09-01",
        queueConsumers: workerOptions.queueConsumers,
        serviceBindings: { MAIN: { external: { address: main, http: {} } } },
      },
    ]
  : [];
const mf = ternMiniflare({ script, config, port, persistTo, vars, d1Host, consumeQueues: false, extraWorkers: relay });
await serveUntilSignal(mf, "services-host");
