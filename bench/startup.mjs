// Issue 12 point 8: bundle size and the Worker's script startup time. Standalone: `node bench/startup.mjs [--quick]`;
// bench/run.mjs runs it at the end of a full run (or with --only=startup).
//
// Bundle: `wrangler deploy --dry-run --outdir <tmp>` on the production entry (src/index.ts, wrangler.toml). Sizes: the
// "Total Upload: … / gzip: …" line wrangler prints, and the same computed here from the bundle's files (source maps
// left out, as wrangler leaves them out of the upload) with node:zlib (gzip level 9 differs from wrangler's by a few KiB).
//
// Startup: the time workerd takes to load and evaluate the bundle. workerd (the binary wrangler uses,
// node_modules/@cloudflare/workerd-*/bin/workerd) is started directly — no wrangler, no miniflare, no bindings — on a
// config whose Worker is a trivial fetch handler (`new Response("ok")`) that statically imports Tern's bundle, so the
// bundle is compiled and its top level evaluated before the Worker can answer. The harness polls GET / every 2 ms from
// the moment the process is spawned until the first response. The same is done for the trivial Worker alone, and
// startup = median(with Tern) − median(alone). (Tern's own fetch cannot be the trivial request: without its D1
// binding every request is a 500.) Runs alternate; workerd's CPU until the first response (/proc) is printed next to
// the wall time, as the wall time stretches on a loaded machine and the CPU time much less.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { cpuMs, cpuSupported, threadCpuMs } from "./cpu.mjs";
import { nodeBin } from "../scripts/node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const STARTUP_TARGETS = { gzipKiB: 400, startupMs: 30 };

function workerdBin() {
  const dir = join(root, "node_modules", "@cloudflare");
  for (const d of existsSync(dir) ? readdirSync(dir) : []) {
    const bin = join(dir, d, "bin", "workerd");
    if (d.startsWith("workerd-") && existsSync(bin)) return bin;
  }
  return null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

function wranglerToml() {
  const t = readFileSync(join(root, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(t)?.[1] ?? "2025-09-01";
  const flags = [...(/^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(t)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  return { date, flags };
}

function config({ modules, port, date, flags }) {
  const mods = modules.map((m) => `(name = "${m.name}", ${m.type} = embed "${m.name}")`).join(", ");
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ ${mods} ],
  compatibilityDate = "${date}",
  compatibilityFlags = [ ${flags.map((f) => `"${f}"`).join(", ")} ],
);
`;
}

/** Spawn workerd on `dir/config.capnp`, poll until the first response; ms from spawn to it (or null). */
async function timeOnce(bin, dir, port) {
  const t0 = performance.now();
  const child = spawn(bin, ["serve", join(dir, "config.capnp"), "--experimental"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  let ms = null;
  let status = null;
  let cpu = null;
  const deadline = t0 + 20_000;
  while (performance.now() < deadline && !exited) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      ms = performance.now() - t0;
      status = res.status;
      cpu = procCpuMs(child.pid);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  child.kill("SIGKILL");
  await new Promise((r) => (exited ? r() : child.on("exit", r)));
  return { ms, cpu, status, stderr: stderr.slice(0, 500) };
}

/** CPU time of a process so far, in ms: its threads' schedstat, or utime + stime in clock ticks where that is missing. */
const procCpuMs = (pid) => threadCpuMs([pid]) ?? (cpuSupported() ? cpuMs([pid]) : null);

const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : null;
};

/**
 * The production bundle of the tree at `cwd` (its src/index.ts and wrangler.toml): `wrangler deploy --dry-run` into
 * `outDir`, with the sizes wrangler prints and the same from the files (source maps left out, gzip level 9). Also used
 * by bench/day-compare.mjs for the tree before issue 34 (a bundle size no worse than before is one of its counts).
 */
export function buildBundle(cwd, outDir) {
  const r = spawnSync(nodeBin, [join(root, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--outdir", outDir], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0" },
  });
  const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(`${r.stdout}\n${r.stderr}`);
  const wrangler = m ? { totalKiB: Number(m[1]), gzipKiB: Number(m[2]) } : undefined;
  if (r.status !== 0 || !existsSync(join(outDir, "index.js"))) {
    return { wrangler, error: `wrangler deploy --dry-run failed: ${(r.stderr || r.stdout).slice(-300)}` };
  }
  const files = readdirSync(outDir).filter((f) => !f.endsWith(".map") && !f.endsWith(".md") && f !== "config.capnp");
  let total = 0;
  let gz = 0;
  for (const f of files) {
    const buf = readFileSync(join(outDir, f));
    total += buf.length;
    gz += gzipSync(buf, { level: 9 }).length;
  }
  return { wrangler, files, bundle: { files: files.length, totalKiB: total / 1024, gzipKiB: gz / 1024 } };
}

export async function measureStartup({ log = () => {}, quick = false } = {}) {
  const out = { notes: [] };
  const tmp = mkdtempSync(join(tmpdir(), "tern-startup-"));
  try {
    // ── bundle ──
    const bundleDir = join(tmp, "tern");
    const built = buildBundle(root, bundleDir);
    Object.assign(out, { wrangler: built.wrangler, bundle: built.bundle });
    if (built.error) {
      out.notes.push(built.error);
      return out;
    }
    const { files } = built;

    // ── startup ──
    const bin = workerdBin();
    if (!bin) {
      out.notes.push("no workerd binary under node_modules/@cloudflare/workerd-*/bin; startup not measured");
      return out;
    }
    out.workerd = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim();
    const { date, flags } = wranglerToml();
    const modules = files
      .filter((f) => /\.(m?js|wasm)$/.test(f))
      .map((f) => ({ name: f, type: f.endsWith(".wasm") ? "wasm" : "esModule" }))
      .sort((a, b) => (a.name === "index.js" ? -1 : b.name === "index.js" ? 1 : 0));
    const emptyDir = join(tmp, "empty");
    spawnSync("mkdir", ["-p", emptyDir]);
    const trivial = 'export default { fetch() { return new Response("ok"); } };\n';
    writeFileSync(join(emptyDir, "index.js"), trivial);
    // The same trivial Worker, importing Tern's bundle: evaluating it is the only difference. (Tern itself cannot
    // answer here: without its D1 binding every request is a 500.)
    writeFileSync(join(bundleDir, "bench-startup.js"), `import * as tern from "./index.js";\nglobalThis.__tern = tern;\n${trivial}`);
    // The trivial Worker with Tern's modules listed but never imported: workerd compiles every module of a Worker
    // when it loads it, imported or not, so this is the compile part alone; tern − listed is evaluating the top level.
    writeFileSync(join(bundleDir, "bench-listed.js"), trivial);
    // The first request of a cold isolate: the same Worker hands its request to Tern's fetch as GET /health, which
    // Tern answers without D1, a queue or a Durable Object (a D1 stub only opens the request's session). What it costs
    // beyond the import is the work Tern defers to its first request: the root router is built, and every function
    // on the way (middleware, routing, the handler) is compiled on first call.
    writeFileSync(
      join(bundleDir, "bench-first.js"),
      `import tern from "./index.js";
const env = { DB: { withSession: () => ({ getBookmark: () => null }) } };
export default {
  async fetch(_req, _env, ctx) {
    const res = await tern.fetch(new Request("http://localhost/health"), env, ctx);
    await res.arrayBuffer();
    return new Response(null, { status: res.status });
  },
};
`,
    );
    // The empty Worker once more, carrying the bundle's bytes as a data module it never reads: workerd reads every
    // module's bytes from its config file (capnp `embed`) before anything is compiled, ~2 ms for Tern's on this
    // machine, a cost of this local harness that a Worker on Cloudflare does not pay in its script startup. Startup is
    // measured against this Worker, so that what remains is compiling and evaluating; the bare empty Worker is kept
    // for the figure with the reading included.
    const bytesDir = join(tmp, "empty-bytes");
    spawnSync("mkdir", ["-p", bytesDir]);
    writeFileSync(join(bytesDir, "index.js"), trivial);
    const bytesModules = modules.map((_, i) => ({ name: `bytes-${i}.bin`, type: "data" }));
    for (const [i, m] of modules.entries()) writeFileSync(join(bytesDir, `bytes-${i}.bin`), readFileSync(join(bundleDir, m.name)));
    const runs = quick ? 5 : 11;
    const times = { tern: [], listed: [], empty: [], bytes: [], first: [] };
    const cpu = { tern: [], listed: [], empty: [], bytes: [], first: [] };
    const statuses = new Set();
    const firstStatuses = new Set();
    for (let i = 0; i < runs + 1; i++) {
      for (const [k, dir, mods] of [
        ["tern", bundleDir, [{ name: "bench-startup.js", type: "esModule" }, ...modules]],
        ["listed", bundleDir, [{ name: "bench-listed.js", type: "esModule" }, ...modules]],
        ["empty", emptyDir, [{ name: "index.js", type: "esModule" }]],
        ["bytes", bytesDir, [{ name: "index.js", type: "esModule" }, ...bytesModules]],
        ["first", bundleDir, [{ name: "bench-first.js", type: "esModule" }, ...modules]],
      ]) {
        const port = await freePort();
        writeFileSync(join(dir, "config.capnp"), config({ modules: mods, port, date, flags }));
        const t = await timeOnce(bin, dir, port);
        if (t.ms === null) {
          out.notes.push(`${k}: workerd gave no response within 20 s: ${t.stderr.replace(/\s+/g, " ")}`);
          return out;
        }
        if (k === "tern") statuses.add(t.status);
        if (k === "first") firstStatuses.add(t.status);
        if (i > 0) {
          times[k].push(t.ms); // the first round warms the page cache
          cpu[k].push(t.cpu);
        }
      }
    }
    const tern = median(times.tern);
    const empty = median(times.bytes);
    const bare = median(times.empty);
    const cpuT = median(cpu.tern);
    const cpuE = median(cpu.bytes);
    const cpuB = median(cpu.empty);
    const cpuL = median(cpu.listed);
    const listed = median(times.listed);
    out.startup = {
      runs,
      ternMs: tern,
      emptyMs: empty,
      bareMs: bare,
      ms: tern - empty,
      withReadingMs: tern - bare,
      cpuWithReadingMs: cpuT === null || cpuB === null ? null : cpuT - cpuB,
      min: Math.min(...times.tern) - Math.min(...times.bytes),
      cpuTern: cpuT,
      cpuEmpty: cpuE,
      cpuMs: cpuT === null || cpuE === null ? null : cpuT - cpuE,
      compileMs: listed - empty,
      evalMs: tern - listed,
      cpuCompileMs: cpuL === null || cpuE === null ? null : cpuL - cpuE,
      cpuEvalMs: cpuT === null || cpuL === null ? null : cpuT - cpuL,
      statuses: [...statuses],
      firstMs: median(times.first) - tern,
      cpuFirstMs: median(cpu.first) === null || cpuT === null ? null : median(cpu.first) - cpuT,
      firstStatuses: [...firstStatuses],
    };
    log(`startup: Tern ${tern.toFixed(1)} ms, empty ${empty.toFixed(1)} ms to the first response`);
    // Sizes for the record (statSync: the bundle as workerd reads it).
    out.bundle.indexKiB = statSync(join(bundleDir, "index.js")).size / 1024;
    return out;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function startupReport(s, { table, fmt, wrap }) {
  const mk = (v, t) => (v === null || v === undefined ? `≤${t} ?` : `≤${t} ${v <= t ? "✓" : "✗"}`);
  const rows = [["Startup (issue 12 point 8)", "value", "target"]];
  if (s.bundle) {
    rows.push(["bundle, total (KiB)", fmt(s.bundle.totalKiB, 1), ""]);
    rows.push(["bundle, gzipped (KiB; node:zlib level 9)", fmt(s.bundle.gzipKiB, 1), mk(s.bundle.gzipKiB, STARTUP_TARGETS.gzipKiB)]);
  }
  if (s.wrangler)
    rows.push([
      "  wrangler's own line: total / gzip (KiB)",
      `${fmt(s.wrangler.totalKiB, 1)} / ${fmt(s.wrangler.gzipKiB, 1)}`,
      mk(s.wrangler.gzipKiB, STARTUP_TARGETS.gzipKiB),
    ]);
  if (s.startup) {
    rows.push(["script startup (ms): Tern − empty Worker, median", fmt(s.startup.ms, 1), mk(s.startup.ms, STARTUP_TARGETS.startupMs)]);
    rows.push([`  spawn → first response: Tern / empty (median of ${s.startup.runs})`, `${fmt(s.startup.ternMs, 1)} / ${fmt(s.startup.emptyMs, 1)}`, ""]);
    rows.push([
      "  with workerd reading the bundle's bytes from its config counted: wall, CPU (ms)",
      `${fmt(s.startup.withReadingMs, 1)}, ${fmt(s.startup.cpuWithReadingMs, 1)}`,
      "",
    ]);
    rows.push(["  difference of the minimums", fmt(s.startup.min, 1), ""]);
    rows.push([
      "  workerd CPU until then (ms, schedstat): Tern − empty (Tern / empty), medians",
      `${fmt(s.startup.cpuMs, 1)} (${fmt(s.startup.cpuTern, 1)} / ${fmt(s.startup.cpuEmpty, 1)})`,
      "",
    ]);
    rows.push([
      "  of which compiling (bundle listed, not imported) / evaluating: wall, CPU (ms)",
      `${fmt(s.startup.compileMs, 1)} / ${fmt(s.startup.evalMs, 1)}, ${fmt(s.startup.cpuCompileMs, 1)} / ${fmt(s.startup.cpuEvalMs, 1)}`,
      "",
    ]);
    rows.push(["  answer of the importing Worker (HTTP)", s.startup.statuses.join(", "), ""]);
    rows.push([
      `first request of the cold isolate, beyond startup (GET /health → ${s.startup.firstStatuses.join(", ")}): wall, CPU (ms)`,
      `${fmt(s.startup.firstMs, 1)}, ${fmt(s.startup.cpuFirstMs, 1)}`,
      "",
    ]);
  }
  const out = [table(rows)];
  out.push(
    wrap(
      `Bundle: wrangler deploy --dry-run of src/index.ts (source maps left out). Startup: ${s.workerd ?? "workerd"} started ` +
        "directly (no wrangler, no bindings) on a trivial Worker that statically imports the bundle, timed from spawn to " +
        "the first response (polled every 2 ms), minus the same for the trivial Worker alone carrying the bundle's bytes as " +
        "an unused data module (same compatibility date and flags): what remains is compiling and evaluating Tern's module. Runs alternate; the first round is left out.",
    ),
  );
  for (const n of s.notes) out.push(`  - ${n}`);
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const fmt = (n, d = 1) => (n === null || n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
  const table = (rows) => {
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...String(r[i])].length)));
    return rows.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ")).join("\n");
  };
  const wrap = (text) => text.replace(/(.{1,118})(\s+|$)/g, "$1\n").trimEnd();
  const s = await measureStartup({ log: (...a) => console.error("[startup]", ...a), quick: process.argv.includes("--quick") });
  console.log(startupReport(s, { table, fmt, wrap }).join("\n"));
}
