#!/usr/bin/env node
// `npm run check`: the gate every change passes, and the first stage of `npm test`.
//   1. types: src/ under the strict flags (tsconfig.json), tests and tools under tsconfig.test.json, by TypeScript 7 (the
//      native compiler, installed as `typescript-native`; the `typescript` package is 6.0, whose JS API
//      dependency-cruiser and scripts/check-layers.mjs parse with: TypeScript 7 has none, and dependency-cruiser 18
//      takes typescript <7);
//   2. lint and format: Biome (one fast native tool for both; see docs/architecture.md "Code gate").
//   0. the lockfile names every optional dependency (npm ci refuses otherwise; see scripts/check-lockfile.mjs);
//   3. nothing built at the Worker's script startup that can wait for its first use (scripts/check-startup.mjs);
//   4. layers: imports point down, no cycle, queue bindings only in the senders (scripts/check-layers.mjs,
//      dependency-cruiser with .dependency-cruiser.cjs; see docs/architecture.md "Layers");
// Prints each part and exits non-zero if any failed. `npm run format` applies Biome's formatting and safe fixes.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "./node.mjs";

// The tools need Node 22.12+: on an older Node this goes on under the bundled one (scripts/node.mjs).
await runOnRecentNode();

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (pkg, file) => join(root, "node_modules", pkg, file);
const parts = [
  ["lockfile: every optional dependency locked", [process.execPath, join(root, "scripts", "check-lockfile.mjs")]],
  ["types: src (strict flags)", [process.execPath, bin("typescript-native", "bin/tsc"), "--noEmit", "-p", "tsconfig.json"]],
  ["types: tests and tools", [process.execPath, bin("typescript-native", "bin/tsc"), "--noEmit", "-p", "tsconfig.test.json"]],
  ["lint + format (biome)", [process.execPath, bin("@biomejs/biome", "bin/biome"), "check", "--max-diagnostics=50", "."]],
  ["startup: no schema, table, \\p{} pattern or Hono app built at load", [process.execPath, join(root, "scripts", "check-startup.mjs")]],
  ["layers: imports point down, no cycle, queue bindings only in the senders", [process.execPath, join(root, "scripts", "check-layers.mjs")]],
];
let failed = 0;
for (const [name, [cmd, ...args]] of parts) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  const ok = r.status === 0;
  if (!ok) failed++;
  console.log(`${ok ? "✔" : "✖"} ${name}`);
}
process.exit(failed ? 1 : 0);
