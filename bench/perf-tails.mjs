// What the runtime did inside each measured invocation, read with Linux `perf` (bench/day.mjs --perf). The V8 profile
// (--profile) sees only JavaScript and the collector's own samples, and samples the isolate sparsely; most of what
// makes an invocation slow happens in the runtime's C++: destroying the objects (Request, Response, Headers, streams)
// whose wrappers a collection found dead, the allocator handing memory back, RSA, the socket writes. `perf record` on
// workerd's main thread samples all of it at a fixed rate on the monotonic clock, the clock the bench stamps each
// invocation's span with (process.hrtime), so each sample falls in the invocation that paid for it. workerd is not
// stripped: its frames have names; JIT-compiled JavaScript shows as unknown addresses.
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";

const HZ = 2999;

/** Starts `perf record` on `pid` (all its threads); resolves to `stop()`, or to null when perf cannot run here. */
export async function startPerf(pid, file) {
  if (spawnSync("perf", ["--version"]).status !== 0) return null;
  const child = spawn("perf", ["record", "-F", String(HZ), "-g", "-k", "CLOCK_MONOTONIC", "-p", String(pid), "-o", file], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  const exited = new Promise((r) => child.once("exit", r));
  // perf says nothing when recording starts; a refusal (perf_event_paranoid, no permission) ends it at once.
  const early = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 500))]);
  if (early) {
    console.error(`[perf] not recording: ${err.trim().split("\n").pop()}`);
    return null;
  }
  return async () => {
    child.kill("SIGINT");
    await exited;
  };
}

// What a sample was doing, judged from its whole stack (leaf first). The first rule that matches wins.
const RULES = [
  // The runtime's C++ objects freed once a collection found their wrappers dead (or at the invocation's end).
  ["objects destroyed", /Wrappable::maybeDeferDestruction|jsg::HeapTracer|DeleteQueue|workerd::api::\w+::~|jsg::Ref<.*>::~Ref/],
  ["young-gen collection", /Scavenger|ScavengeJob|MinorGCJob|MinorMarkSweep/],
  [
    "full collection",
    /MarkCompactCollector|IncrementalMarking|ConcurrentMarking|cppgc::internal|Sweeper|Heap::CollectAllGarbage|Heap::FinalizeIncrementalMarking/,
  ],
  ["collection (other)", /v8::internal::Heap::CollectGarbage|Heap::PerformGarbageCollection|GCTracer/],
  ["allocator (tcmalloc)", /^tcmalloc::|^TCMalloc/],
  ["RSA / bignum", /RSA_|rsa_|BN_|bn_|mulx4x|sqrx8x|__bn_/],
  ["hashing, HMAC, other crypto", /SHA256|sha256_block|HMAC|EVP_|ecdsa|ED25519|X25519|aes_|gcm_/],
  [
    "compiling JavaScript",
    /Parser::|ParseProgram|ParseFunction|Compiler::Compile|BytecodeGenerator|compiler::Pipeline|maglev::|Maglev|BaselineBatchCompiler|Compiler::CompileBaseline/,
  ],
  ["JSON", /JsonParser|JsonStringif/],
  [
    "fetch, Request, Response, Headers, streams",
    /fetchImpl|workerd::api::(Request|Response|Headers|Fetcher|ReadableStream|WritableStream)|AbortableInputStream|kj::Http/,
  ],
  [
    "kernel (sockets, scheduling)",
    /^(tcp_|ip_|__tcp|__ip|__dev|net_rx|__netif|sock_|ksys_|vfs_|do_syscall|entry_SYSCALL|epoll|__x64_sys|schedule|__schedule|finish_task_switch|_raw_spin|do_softirq|handle_softirqs|__local_bh)/,
  ],
  ["SQLite (local D1, R2's index)", /sqlite3/],
  ["memory copies", /^(__)?mem(cpy|move)/],
];

function classify(frames) {
  for (const [name, re] of RULES) if (frames.some((f) => re.test(f))) return name;
  if (frames[0] === "[unknown]" || /^Builtins_/.test(frames[0])) return "JavaScript (JIT code, builtins)";
  if (/^v8::/.test(frames[0])) return "V8 runtime";
  return "runtime, other";
}

/**
 * Reads `file` (perf script) and attributes the main thread's samples to `windows` ({ kind, ms, from, to }: µs on the
 * monotonic clock); prints the slowest invocations and, per kind, where its median invocation's time went.
 */
export async function reportPerf(file, windows, { top = 25 } = {}) {
  const child = spawn("perf", ["script", "-i", file, "-F", "tid,time,ip,sym", "--ns"], { stdio: ["ignore", "pipe", "ignore"] });
  const lines = createInterface({ input: child.stdout });
  const samples = []; // [tid, µs, category]
  let head = null;
  let frames = [];
  const flush = () => {
    if (head) samples.push([head[0], head[1], classify(frames)]);
    head = null;
    frames = [];
  };
  for await (const line of lines) {
    if (!line.trim()) {
      flush();
      continue;
    }
    const m = /^\s*(\d+)\s+([\d.]+):/.exec(line);
    if (m) {
      flush();
      head = [Number(m[1]), Number(m[2]) * 1e6];
    } else
      frames.push(
        line
          .trim()
          .replace(/^[0-9a-f]+ /, "")
          .replace(/\s*\(.*$/, ""),
      );
  }
  flush();
  if (!samples.length) {
    console.log("\n[perf] no samples recorded");
    return;
  }
  // workerd runs JavaScript (every isolate) and its I/O on one thread: the one with the most samples.
  const perTid = new Map();
  for (const s of samples) perTid.set(s[0], (perTid.get(s[0]) ?? 0) + 1);
  const main = [...perTid].sort((a, b) => b[1] - a[1])[0][0];
  const onMain = samples.filter((s) => s[0] === main).sort((a, b) => a[1] - b[1]);
  const msPer = 1000 / HZ;
  const firstAt = (t) => {
    let lo = 0;
    let hi = onMain.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (onMain[mid][1] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const split = (w) => {
    const by = new Map();
    let n = 0;
    for (let i = firstAt(w.from); i < onMain.length && onMain[i][1] <= w.to; i++, n++) by.set(onMain[i][2], (by.get(onMain[i][2]) ?? 0) + 1);
    return { n, by };
  };
  const fmt = (c) => (c * msPer).toFixed(1);
  console.log(
    `\nperf (${HZ} Hz on workerd's main thread, ${onMain.length} samples; ${perTid.size - 1} other thread(s) ${samples.length - onMain.length}): ` +
      `the ${top} slowest measured invocations, ms by what the runtime was doing:`,
  );
  for (const w of [...windows].sort((a, b) => b.ms - a.ms).slice(0, top)) {
    const { n, by } = split(w);
    const parts = [...by].sort((a, b) => b[1] - a[1]).slice(0, 5);
    console.log(`${w.ms.toFixed(1).padStart(6)} ms ${w.kind.padEnd(22)} sampled ${fmt(n).padStart(5)}: ${parts.map(([k, c]) => `${k} ${fmt(c)}`).join("; ")}`);
  }
  // How much of the tail is the runtime's lumps: the invocations over 10 ms, and how many stay over once the samples
  // in collections and in destroying the objects they freed are taken out.
  const LUMPS = new Set(["objects destroyed", "young-gen collection", "full collection", "collection (other)"]);
  const over = windows.filter((w) => w.ms > 10);
  const stay = over.filter((w) => {
    const { by } = split(w);
    const lumps = [...by].filter(([c]) => LUMPS.has(c)).reduce((a, [, v]) => a + v, 0);
    return w.ms - lumps * msPer > 10;
  });
  const pct = (n) => `${((100 * n) / windows.length).toFixed(2)}%`;
  console.log(
    `\nover 10 ms: ${over.length} of ${windows.length} invocations (${pct(over.length)}); without the samples in collections and in ` +
      `destroying what they freed, ${stay.length} (${pct(stay.length)}): ${stay.map((w) => `${w.kind.replace(/ #\d+$/, "")} ${w.ms.toFixed(1)}`).join(", ")}`,
  );
  // Per kind: the mean split of its invocations, and the same for those over 10 ms.
  const kinds = new Map();
  for (const w of windows) {
    const k = w.kind.replace(/ #\d+$/, "");
    if (!kinds.has(k)) kinds.set(k, []);
    kinds.get(k).push(w);
  }
  const cats = [...RULES.map((r) => r[0]), "JavaScript (JIT code, builtins)", "V8 runtime", "runtime, other"];
  console.log("\nper kind, ms per invocation by what the runtime was doing (all / over 10 ms):");
  for (const [k, ws] of [...kinds, ["every kind", windows]]) {
    const all = new Map();
    const over = new Map();
    let nOver = 0;
    for (const w of ws) {
      const { by } = split(w);
      if (w.ms > 10) nOver++;
      for (const [c, v] of by) {
        all.set(c, (all.get(c) ?? 0) + v);
        if (w.ms > 10) over.set(c, (over.get(c) ?? 0) + v);
      }
    }
    const line = cats
      .filter((c) => (all.get(c) ?? 0) * msPer >= 0.05 * ws.length || (over.get(c) ?? 0) * msPer >= 0.5 * nOver)
      .map((c) => `${c} ${(((all.get(c) ?? 0) * msPer) / ws.length).toFixed(2)}${nOver ? ` / ${(((over.get(c) ?? 0) * msPer) / nOver).toFixed(1)}` : ""}`);
    console.log(`  ${k} (${ws.length}, ${nOver} over 10 ms): ${line.join("; ")}`);
  }
}
