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
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { applyMigrations, freePort, root } from "../test/support/server.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => Number(argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt);
const KIND = argv.find((a) => !a.startsWith("--")) ?? "home";
const RUNS = opt("runs", 7);
const REQUESTS = opt("requests", 6);
const PATHS = { home: "/api/v1/timelines/home?limit=20", verify: "/api/v1/accounts/verify_credentials", notifications: "/api/v1/notifications" };
if (!PATHS[KIND]) throw new Error(`unknown kind ${KIND}: ${Object.keys(PATHS).join(", ")}`);

const tmp = mkdtempSync(join(tmpdir(), "tern-cold-"));
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
/** The workerd this process started (Miniflare's child). */
const workerdPid = () =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .find((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("workerd") && readFileSync(`/proc/${p}/stat`, "utf8").split(" ")[3] === String(process.pid);
      } catch {
        return false;
      }
    });
const cpuMs = (pid) => {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns / 1e6;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

try {
  const out = join(tmp, "bundle");
  const b = spawnSync(process.execPath, [join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", out], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  if (b.status !== 0) throw new Error(`wrangler deploy --dry-run failed: ${b.stderr}`);
  applyMigrations(tmp);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, "wrangler.toml"));
  const start = async () => {
    const mf = new Miniflare({
      host: "127.0.0.1",
      port: await freePort(),
      defaultPersistRoot: join(tmp, "v3"),
      log: new Log(LogLevel.ERROR),
      workers: [
        {
          ...workerOptions,
          name: "tern",
          modules: true,
          scriptPath: join(out, "index.js"),
          modulesRoot: out,
          bindings: { ...workerOptions.bindings, REGISTRATIONS_MODE: "open" },
        },
      ],
    });
    return { mf, url: (await mf.ready).href.replace(/\/$/, "") };
  };
  const call = async (url, path, { form, token } = {}) => {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(url + path, { method: form ? "POST" : "GET", headers, body: form ? new URLSearchParams(form).toString() : undefined });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
    return res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
  };

  // Seed through the API, then stop: every run below starts a new workerd on this D1.
  const seed = await start();
  const app = await call(seed.url, "/api/v1/apps", { form: { client_name: "cold", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" } });
  const grant = { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret, scope: "read write" };
  const appToken = (await call(seed.url, "/oauth/token", { form: grant })).access_token;
  const signup = { username: "cold", email: "cold@example.com", password: "correct horse battery", agreement: "true", locale: "en" };
  const token = (await call(seed.url, "/api/v1/accounts", { form: signup, token: appToken })).access_token;
  for (let i = 0; i < 30; i++) await call(seed.url, "/api/v1/statuses", { form: { status: `Status ${i} about #tern` }, token });
  await seed.mf.dispose();

  const perRequest = Array.from({ length: REQUESTS }, () => []);
  for (let run = 0; run < RUNS; run++) {
    const { mf, url } = await start();
    const pid = workerdPid();
    await pause(300);
    for (let k = 0; k < REQUESTS; k++) {
      const before = cpuMs(pid);
      await call(url, PATHS[KIND], { token });
      await pause(100);
      perRequest[k].push(cpuMs(pid) - before);
    }
    await mf.dispose();
  }
  const medians = perRequest.map(median);
  console.log(`${KIND}: CPU ms of a fresh workerd's requests 1..${REQUESTS} (median of ${RUNS} runs): ${medians.map((m) => m.toFixed(1)).join(" ")}`);
  console.log(`  sum: ${medians.reduce((a, b) => a + b, 0).toFixed(1)} ms; request 1 minus the last: ${(medians[0] - medians.at(-1)).toFixed(1)} ms`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
