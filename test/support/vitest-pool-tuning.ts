// Tuning of @cloudflare/vitest-pool-workers for a small machine (imported by vitest.config.ts; runs in vitest's node
// process, not in workerd).
//
// Files at once: each test file runs in its own workerd (a pool worker is one Miniflare; vitest does not reuse one
// across files). Up to the pool for Vitest 3 (0.12), every file started at once whatever maxWorkers said, so a gate
// here bounded them; under Vitest 4 the pool is a vitest pool runner and vitest's `maxWorkers` bounds them
// (vitest.config.ts sets it to fileConcurrency()). 50-70 runtimes sharing two cores had each test get a few percent of
// a core and wall-clock limits (testTimeout, vi.waitFor) fire.
import http from "node:http";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PATCHED = Symbol.for("tern.vitestPoolTuning");
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Files run at once: TERN_VITEST_FILES, else twice the core count, between 2 and 6. A file spends much of its time
 * waiting on round trips (each module it loads is one request to vitest's node process), so a few more files than
 * cores keep the CPUs busy; many more only stretch every test's wall time.
 */
export function fileConcurrency(): number {
  const fromEnv = Number(process.env.TERN_VITEST_FILES);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.min(6, Math.max(2, 2 * availableParallelism()));
}

/**
 * The pool talks to each runtime over one WebSocket (module code with inline source maps, task updates), opened by
 * the pool's own miniflare with `ws`, which offers permessage-deflate, which workerd accepts. Profiling `vitest run`
 * showed vitest's single node thread spending seconds per test file in zlib for those frames, while every runtime
 * waits on that thread. The offer is renamed so no compression is negotiated (both ends then send plain frames). Only
 * this process is affected, and in it that `ws` carries nothing but miniflare's local sockets.
 */
export function declineWebSocketCompression(): void {
  // The pool's miniflare (its own dependency, not the project's), then the `ws` that miniflare loads.
  const fromPool = createRequire(join(root, "node_modules", "@cloudflare", "vitest-pool-workers", "dist", "pool", "index.mjs"));
  const wsRequire = createRequire(createRequire(fromPool.resolve("miniflare")).resolve("ws"));
  const PerMessageDeflate = wsRequire("./lib/permessage-deflate.js");
  if (PerMessageDeflate[PATCHED]) return;
  Object.defineProperty(PerMessageDeflate, "extensionName", { configurable: true, get: () => "x-tern-no-compression" });
  PerMessageDeflate[PATCHED] = true;
}

/**
 * Miniflare's loopback server (the runtimes' calls back into this process) is a node:http server, which closes an idle
 * keep-alive connection after 5 s. workerd keeps its connection to it pooled, so a call after more than 5 s without one
 * could go out on a connection node was closing just then: "Network connection lost", a failed test that never failed,
 * seen on a loaded machine after tests of 6-7 s. Connections in this process stay open for 10 minutes instead.
 */
export function keepLoopbackConnectionsOpen(): void {
  if ((http.createServer as { [PATCHED]?: boolean })[PATCHED]) return;
  const create = http.createServer;
  const patched = ((...args: Parameters<typeof http.createServer>) => {
    const server = create(...args);
    server.keepAliveTimeout = 10 * 60_000;
    return server;
  }) as typeof http.createServer & { [PATCHED]?: boolean };
  patched[PATCHED] = true;
  http.createServer = patched;
}
