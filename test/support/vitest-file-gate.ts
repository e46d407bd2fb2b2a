// Bounded file concurrency for @cloudflare/vitest-pool-workers (imported by vitest.config.ts; runs in vitest's node
// process, not in workerd).
//
// Why: with `isolatedStorage` and `singleWorker: false` the pool starts one workerd per test file and runs EVERY file
// at once: it ignores vitest's maxWorkers/fileParallelism (pool/index.mjs, executeMethod: one runTests() per file,
// then Promise.allSettled). On a 2-core machine that is 50-70 runtimes sharing two cores, so each test gets a few
// percent of a core and wall-clock limits (testTimeout, vi.waitFor) fire: "Test timed out in 60000ms", then
// "Network connection lost" / "Isolated storage failed" in the next test of the file because the timed-out test's
// work is still running when its storage frame is popped.
//
// How: runTests() starts a file by asking miniflare for the runner Durable Object namespace
// (`mf.getDurableObjectNamespace("__VITEST_POOL_WORKERS_RUNNER_OBJECT")`), then fetches a WebSocket from its
// "singleton" object; the file is done when that socket closes. The namespace call waits for a slot, and the
// socket's close (or a failed fetch) frees it. Nothing else in the pool changes: each file still gets its own runtime
// and storage; the runtimes are still all started up front (they sit idle until their file's turn).
import http from "node:http";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Miniflare } from "miniflare";

const require_resolve = createRequire(import.meta.url).resolve;
const RUNNER_OBJECT_BINDING = "__VITEST_POOL_WORKERS_RUNNER_OBJECT";
const PATCHED = Symbol.for("tern.vitestFileGate");

/**
 * Files run at once: TERN_VITEST_FILES, else twice the core count, between 2 and 6. A file spends much of its time
 * waiting on round trips (each module it loads is one request to vitest's node process), so a few more files than
 * cores keep the CPUs busy; many more only stretch every test's wall time (the pool's own default is all of them).
 */
export function fileConcurrency(): number {
  const fromEnv = Number(process.env.TERN_VITEST_FILES);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Math.min(6, Math.max(2, 2 * availableParallelism()));
}

class Semaphore {
  private waiting: (() => void)[] = [];
  private active = 0;
  constructor(private readonly size: number) {}
  async acquire(): Promise<() => void> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes straight to the next file
      else this.active--;
    };
  }
}

type Namespace = Awaited<ReturnType<Miniflare["getDurableObjectNamespace"]>>;

/** The runner namespace with a slot already held: the file's upgrade fetch keeps it until the socket closes. */
function holdSlot(ns: Namespace, release: () => void): Namespace {
  const wrapStub = (stub: any) =>
    new Proxy(stub, {
      get(s, k) {
        const v = Reflect.get(s, k);
        if (typeof v !== "function") return v;
        if (k !== "fetch") return v.bind(s);
        return async (...args: unknown[]) => {
          try {
            const res = await v.apply(s, args);
            if (res.webSocket) res.webSocket.addEventListener("close", release);
            else release();
            return res;
          } catch (e) {
            release();
            throw e;
          }
        };
      },
    });
  return new Proxy(ns, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      if (key !== "get") return value.bind(target);
      return (...args: unknown[]) => wrapStub(value.apply(target, args));
    },
  });
}

/**
 * Installs the gate once per process (vitest may load the config more than once). The slot is taken before the pool
 * asks miniflare for the runner namespace: that call blocks node's only thread (a synchronous round trip to the
 * runtime), which is cheap when the runtime is not competing with dozens of others.
 */
export function installFileGate(size = fileConcurrency()): number {
  const proto = Miniflare.prototype as any;
  if (proto[PATCHED]) return proto[PATCHED].size;
  const gate = new Semaphore(size);
  const original = proto.getDurableObjectNamespace;
  proto.getDurableObjectNamespace = async function (this: Miniflare, bindingName: string, ...rest: unknown[]) {
    if (bindingName !== RUNNER_OBJECT_BINDING) return original.call(this, bindingName, ...rest);
    const release = await gate.acquire();
    try {
      return holdSlot(await original.call(this, bindingName, ...rest), release);
    } catch (e) {
      release();
      throw e;
    }
  };
  proto[PATCHED] = { size };
  return size;
}

/**
 * The pool talks to each runtime over one WebSocket (module code with inline source maps, task updates), and `ws`
 * offers permessage-deflate, which workerd accepts. Profiling `vitest run` showed vitest's single node thread
 * spending seconds per test file in zlib for those frames, while every runtime waits on that thread. The offer is
 * renamed so no compression is negotiated (both ends then send plain frames). Only this process is affected, and in
 * it `ws` carries nothing but miniflare's local sockets.
 */
export function declineWebSocketCompression(): void {
  const wsRequire = createRequire(createRequire(require_resolve("miniflare")).resolve("ws"));
  const PerMessageDeflate = wsRequire("./lib/permessage-deflate.js");
  if (PerMessageDeflate[PATCHED]) return;
  Object.defineProperty(PerMessageDeflate, "extensionName", { configurable: true, get: () => "x-tern-no-compression" });
  PerMessageDeflate[PATCHED] = true;
}

/**
 * Miniflare's loopback server (the runtimes' calls back into this process: above all the isolated storage's push and
 * pop around every test) is a node:http server, which closes an idle keep-alive connection after 5 s. workerd keeps
 * its connection to it pooled, so a test that ran over 5 s without such a call could send its storage pop on a
 * connection node was closing just then: "Network connection lost" in updateStackedStorage, a failed test that never
 * failed, seen on a loaded machine after tests of 6-7 s. Connections in this process stay open for 10 minutes instead.
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
