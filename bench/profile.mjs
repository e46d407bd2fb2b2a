// Where a request's CPU goes inside the Worker: a V8 CPU profile of Tern's isolate while one kind of request repeats.
// `node bench/profile.mjs [scenario] [--n=300] [--out=FILE] [--alloc]`; scenarios: post (POST /api/v1/statuses, with
// the queued work it causes), home, notifications, verify. Not part of `npm run bench`.
// --alloc: what the requests allocate instead (V8's sampling heap profiler, 1 KiB interval, objects collected by
// either GC kept): KiB a request, and the functions that allocate most, by themselves and with what they call. Garbage
// is what the CPU tails are made of (scavenges of several ms land in whichever invocation fills the young generation;
// bench/README.md, "CPU per invocation").
//
// Tern is bundled unminified (`wrangler deploy --dry-run --no-minify`, so the profile names functions), served by
// Miniflare on a fresh local D1 with the migrations applied and the V8 inspector on; the harness signs up one user,
// posts 60 statuses (for the read scenarios), warms up with 50 requests, then records a profile over N requests
// (Profiler domain of the inspector protocol, 50 µs sampling). It prints the functions with the most self time and
// the most inclusive time per request, and writes the profile (open it in Chrome DevTools' Performance panel).
// Only the Worker's isolate is profiled: local D1's SQLite runs in another one and is not in these figures, the D1
// binding's JavaScript (`cloudflare-internal:d1-api`: sending a query, parsing its JSON result) is. Sampling
// overhead inflates the totals; read the shares.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LogLevel } from "miniflare";
import { applyMigrations, freePort } from "../test/support/server.mjs";
import { attachIsolate, reportAlloc, reportCpu, startAllocProfile, startCpuProfile } from "./inspector.mjs";
import { apiCall, bundleTern, signUp, ternMiniflare } from "./miniflare.mjs";

const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const SCENARIO = argv.find((a) => !a.startsWith("--")) ?? "post";
const N = Number(opt("n") ?? 300);
const OUT = opt("out") ?? join(tmpdir(), `tern-${SCENARIO}.cpuprofile`);
const TOP = Number(opt("top") ?? 25);
const ALLOC = argv.includes("--alloc") || argv.includes("--alloc=survivors");
// --alloc=survivors: only what outlived a scavenge (what the young generation's collections copy and promote).
const SURVIVORS = argv.includes("--alloc=survivors");

const tmp = mkdtempSync(join(tmpdir(), "tern-profile-"));
try {
  const script = bundleTern(join(tmp, "bundle"), { minify: false });
  applyMigrations(tmp);
  const inspectorPort = await freePort();
  // Loopback is on the rate limits' safelist by default, so a long run is never refused.
  const mf = ternMiniflare({ script, persistTo: tmp, port: await freePort(), inspectorPort, vars: { REGISTRATIONS_MODE: "open" }, logLevel: LogLevel.ERROR });
  const url = (await mf.ready).href.replace(/\/$/, "");
  try {
    const statuses = {};
    const call = async (path, init) => {
      const { status, body } = await apiCall(url, path, init);
      statuses[status] = (statuses[status] ?? 0) + 1;
      return body;
    };
    const token = await signUp(url, "profile");
    const post = (i) => call("/api/v1/statuses", { form: { status: `Status ${i} about #tern with a few more words to count` }, token });
    const scenarios = {
      post,
      home: () => call("/api/v1/timelines/home?limit=20", { token }),
      notifications: () => call("/api/v1/notifications", { token }),
      verify: () => call("/api/v1/accounts/verify_credentials", { token }),
    };
    const one = scenarios[SCENARIO];
    if (!one) throw new Error(`unknown scenario ${SCENARIO}: ${Object.keys(scenarios).join(", ")}`);
    if (SCENARIO !== "post") for (let i = 0; i < 60; i++) await post(i);
    for (let i = 0; i < 50; i++) await one(-i);
    for (const k of Object.keys(statuses)) delete statuses[k];

    const isolate = await attachIsolate(inspectorPort);
    const stop = await (ALLOC ? startAllocProfile(isolate, { survivors: SURVIVORS }) : startCpuProfile(isolate));
    for (let i = 0; i < N; i++) await one(i);
    const profile = await stop();
    isolate.close();
    const label = `${SCENARIO}: ${N} requests`;
    if (ALLOC) reportAlloc(profile, { n: N, label, top: TOP });
    else {
      writeFileSync(OUT, JSON.stringify(profile));
      reportCpu(profile, { n: N, label, top: TOP });
    }
    console.log(`answers: ${JSON.stringify(statuses)}${ALLOC ? "" : `; profile written to ${OUT}`}`);
  } finally {
    await mf.dispose();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
