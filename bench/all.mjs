#!/usr/bin/env node
// `npm run bench`: the request benchmark (bench/run.mjs), then the streaming one (bench/streaming.mjs). Options go to
// run.mjs; with --only=… (a few request scenarios) the streaming part is left out, as it is its own run of minutes.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const run = (file, argv) => spawnSync(process.execPath, [join(dir, file), ...argv], { stdio: "inherit" }).status ?? 1;

const status = run("run.mjs", args);
if (args.some((a) => a.startsWith("--only"))) process.exit(status);
process.exit(run("streaming.mjs", []) || status);
