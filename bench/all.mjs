#!/usr/bin/env node
// `npm run bench`: everything issue 12 asks to see in one run — the request benchmark with growth (small and large
// seeds), posting on its own and startup (bench/run.mjs), then the streaming benchmark (bench/streaming.mjs, with its
// before/after comparison), the soak (bench/soak.mjs: does fan-out keep up under load) and the replayed day against
// the free plan, before and after (bench/day-compare.mjs: bench/day.mjs --apart on the commit before issue 34 and on
// this tree). At the end, one summary: issue 34's goals, each a ratio measured in this run with ✓/✗, and what it includes.
// Options go to run.mjs; with --only=… (a few request scenarios) the other parts are left out, as each is its own run
// of minutes. --quick shortens every part (the streaming comparison at 1,000 followers only, the soak to 30 s, each
// day to a tenth, scaled back up).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
// Each part appends its goal lines here (BENCH_SUMMARY); printed together at the end.
const summary = join(tmpdir(), `tern-bench-summary-${process.pid}.txt`);
rmSync(summary, { force: true });
const env = { ...process.env, BENCH_SUMMARY: summary };
const run = (file, argv) => spawnSync(process.execPath, [join(dir, file), ...argv], { stdio: "inherit", env }).status ?? 1;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
const t0 = Date.now();
const load0 = load();

let status = run("run.mjs", args);
if (args.some((a) => a.startsWith("--only"))) process.exit(status);
status = run("streaming.mjs", quick ? ["--only=compare", "--compare-sizes=1000"] : []) || status;
status = run("soak.mjs", quick ? ["--seconds=30"] : []) || status;
// The day with D1, the Durable Objects and the queue simulator in other processes: its CPU per invocation is the
// Worker's, as the free plan's limit counts it (each of those is billed apart there); before and after, one sitting.
// Incoming media are not cached on either side (--media-cache=off): the tree before issue 34 had no media cache, and
// the same work on both sides is what the comparison is for (the cache's own cost: bench/README.md, issue 32).
status = run("day-compare.mjs", [`--fraction=${quick ? "0.1" : "0.5"}`, "--media-cache=off"]) || status;

const lines = existsSync(summary) ? readFileSync(summary, "utf8").trim().split("\n") : [];
rmSync(summary, { force: true });
console.log("");
console.log(
  `Summary: issue 34's goals, measured in this run (${((Date.now() - t0) / 60_000).toFixed(0)} minutes; load average ${load0} at the start, ${load()} at the end; ` +
    `2 cores shared, so each goal is a ratio within one sitting):`,
);
for (const l of lines) console.log(`  ${l}`);
if (!lines.length) console.log("  (no part printed its goals: see the errors above)");
console.log(
  "  What each includes: streaming CPU is the one workerd's utime+stime (Tern, its Durable Objects, local D1) per post; " +
    "the day's and verify_credentials' CPU is the measured workerd's with D1, the Durable Objects and the queue " +
    "simulator in other processes (the Worker alone, as the free plan's 10 ms counts it); the soak's is JOBS consumer " +
    "time against wall time. bench/README.md, 'Issue 34 in one run'.",
);
process.exit(status);
