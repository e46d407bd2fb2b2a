// The first requests of a cold Worker: what a fresh workerd spends on each of its first requests of one kind, on a
// seeded local D1. `node bench/cold.mjs [home|verify|notifications] [--runs=7] [--requests=6]`. Not part of
// `npm run bench`.
//
// bench/startup.mjs times the script startup alone, and what Tern leaves to its first request without D1 (`GET
// /health`). Work deferred from startup (tables, schemas, row shapes built on first use) is paid by the first requests
// that need it; this shows where it lands. Tern is bundled as for deployment (`wrangler deploy --dry-run`) and served
// by Miniflare on a fresh local D1 with the migrations applied; one user signs up and posts 30 statuses; then, `runs`
// times, Miniflare is started again on the same D1 (a new workerd, so a cold isolate) and the chosen request is made
// `requests` times, one after another with 100 ms between them. Printed: the median, over the runs, of each request's
// CPU (all of workerd's threads, /proc schedstat, from before the request to 100 ms after it). That CPU includes local
// D1 and the Durable Objects (their own first use too), so compare trees or requests, not the absolute figures.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevel } from "miniflare";
import { applyMigrations, freePort } from "../test/support/server.mjs";
import { threadCpuMs, workerdPids } from "./cpu.mjs";
import { apiCall, bundleTern, signUp, ternMiniflare } from "./miniflare.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => Number(argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt);
const KIND = argv.find((a) => !a.startsWith("--")) ?? "home";
const RUNS = opt("runs", 7);
const REQUESTS = opt("requests", 6);
const PATHS = { home: "/api/v1/timelines/home?limit=20", verify: "/api/v1/accounts/verify_credentials", notifications: "/api/v1/notifications" };
if (!PATHS[KIND]) throw new Error(`unknown kind ${KIND}: ${Object.keys(PATHS).join(", ")}`);

const tmp = mkdtempSync(join(tmpdir(), "tern-cold-"));
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

try {
  const script = bundleTern(join(tmp, "bundle"));
  applyMigrations(tmp);
  const start = async () => {
    const mf = ternMiniflare({ script, persistTo: tmp, port: await freePort(), vars: { REGISTRATIONS_MODE: "open" }, logLevel: LogLevel.ERROR });
    return { mf, url: (await mf.ready).href.replace(/\/$/, "") };
  };
  const call = async (url, path, init) => {
    const { status, body } = await apiCall(url, path, init);
    if (status >= 400) throw new Error(`${path}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
    return body;
  };

  // Seed through the API, then stop: every run below starts a new workerd on this D1.
  const seed = await start();
  const token = await signUp(seed.url, "cold");
  for (let i = 0; i < 30; i++) await call(seed.url, "/api/v1/statuses", { form: { status: `Status ${i} about #tern` }, token });
  await seed.mf.dispose();

  const perRequest = Array.from({ length: REQUESTS }, () => []);
  for (let run = 0; run < RUNS; run++) {
    const { mf, url } = await start();
    // Miniflare's workerd is a child of this process.
    const pids = workerdPids(process.pid);
    await pause(300);
    for (let k = 0; k < REQUESTS; k++) {
      const before = threadCpuMs(pids);
      await call(url, PATHS[KIND], { token });
      await pause(100);
      perRequest[k].push(threadCpuMs(pids) - before);
    }
    await mf.dispose();
  }
  const medians = perRequest.map(median);
  console.log(`${KIND}: CPU ms of a fresh workerd's requests 1..${REQUESTS} (median of ${RUNS} runs): ${medians.map((m) => m.toFixed(1)).join(" ")}`);
  console.log(`  sum: ${medians.reduce((a, b) => a + b, 0).toFixed(1)} ms; request 1 minus the last: ${(medians[0] - medians.at(-1)).toFixed(1)} ms`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
