#!/usr/bin/env node
// `npm run test:federation`: every test/federation/*.test.mjs under node:test (Tern under `wrangler dev` against a
// fedify peer, both on 127.0.0.1). TERN_FED_LOG=1 prints fedify's logs; TERN_E2E_LOG=1 wrangler's.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "../../scripts/node.mjs";

// The tools need Node 22.12+: on an older Node this goes on under the bundled one (scripts/node.mjs).
await runOnRecentNode();

const dir = dirname(fileURLToPath(import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".test.mjs"))
  .sort()
  .map((f) => join(dir, f));
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=1", "--test-reporter=spec", ...process.argv.slice(2), ...files], {
  stdio: "inherit",
});
process.exit(r.status ?? 1);
