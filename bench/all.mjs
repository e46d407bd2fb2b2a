#!/usr/bin/env node
// `npm run bench`: everything issue 12 asks to see in one run — the request benchmark with growth (small and large
// seeds), posting on its own and startup (bench/run.mjs), then the streaming benchmark (bench/streaming.mjs), the soak
// (bench/soak.mjs: does fan-out keep up under load) and the replayed day against the free plan (bench/day.mjs
// --apart).
// Options go to run.mjs; with --only=… (a few request scenarios) the other parts are left out, as each is its own run
// of minutes. --quick shortens every part (the soak to 30 s, the day to a tenth, scaled back up).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const run = (file, argv) => spawnSync(process.execPath, [join(dir, file), ...argv], { stdio: "inherit" }).status ?? 1;

let status = run("run.mjs", args);
if (args.some((a) => a.startsWith("--only"))) process.exit(status);
status = run("streaming.mjs", []) || status;
status = run("soak.mjs", quick ? ["--seconds=30"] : []) || status;
// The day with D1, the Durable Objects and the queue simulator in other processes: its CPU per invocation is the
// Worker's, as the free plan's limit counts it (each of those is billed apart there).
status = run("day.mjs", ["--apart", ...(quick ? ["--fraction=0.1"] : [])]) || status;
process.exit(status);
