#!/usr/bin/env node
// The lockfile must name every optional dependency of every locked package, or `npm ci` refuses to install
// ("package.json and package-lock.json are not in sync", "Missing: … from lock file").
// Why this can break: `npm install` on a machine whose registry lacks some platform builds of a package (the
// Biome CLI for darwin/win32/musl, say) writes a lockfile without them; the entries for those platforms were
// then added by hand (version, os, cpu, libc; npm skips them on other platforms and keeps them on `npm install`).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
const packages = lock.packages ?? {};
const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency from the nearest node_modules up the tree.
    let found = false;
    let base = path;
    for (;;) {
      if (packages[`${base ? `${base}/` : ""}node_modules/${name}`]) {
        found = true;
        break;
      }
      if (!base) break;
      const i = base.lastIndexOf("/node_modules/");
      base = i < 0 ? "" : base.slice(0, i);
    }
    if (!found) missing.push(`${name} (optional dependency of ${path || "the project"})`);
  }
}
if (missing.length) {
  console.error(`package-lock.json lacks entries that npm ci needs:\n  ${missing.join("\n  ")}`);
  process.exit(1);
}
