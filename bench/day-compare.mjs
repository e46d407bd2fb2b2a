#!/usr/bin/env node
// Issue 34 point 2 (fewer subrequests per invocation), before and after in one sitting: the replayed day
// (bench/day.mjs --apart: the measured workerd runs the Worker alone; D1, the Durable Objects, R2 and the queue simulator
// in other processes) on another commit's src/ ("before", `--before=<commit>`, by default the commit before issue 34,
// as bench/streaming-compare.mjs) and on the working tree ("after"), one after the other with the same seed, workload
// and bench entry. Prints, per invocation kind, the invocations measured, the share over 10 ms of CPU and the p99 on
// each side, and the goal: the share over 10 ms at least halved, and no kind's p99 worse. The "after" day's full report
// (the free plan's lines) is printed by its run as usual.
//   node bench/day-compare.mjs [--fraction=0.3] [--before=<commit>] [--order=before,after] [--summary=FILE]
// Other options go to both day runs. --summary=FILE (or BENCH_SUMMARY): append the goal lines there (bench/all.mjs
// prints them at the end of `npm run bench`).
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBundle } from "./startup.mjs";
import { BEFORE_COMMIT } from "./streaming-compare.mjs";

const dir = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const own = ["before", "order", "summary", "fraction", "dump"];
const passOn = argv.filter((a) => !own.some((o) => a.startsWith(`--${o}=`)));
const fraction = opt("fraction") ?? "0.3";
const before = opt("before") ?? BEFORE_COMMIT;
const order = (opt("order") ?? "before,after").split(",");
const summaryFile = opt("summary") ?? process.env.BENCH_SUMMARY ?? null;
/** Goal (issue 34 point 2): the share of invocations over 10 ms of CPU at most this part of before's. */
const GOAL_SHARE = 0.5;
const LIMIT_MS = 10;

const log = (...a) => console.error("[bench:day-compare]", ...a);
const fmt = (n, d = 1) => (n === null || n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
const pct = (x) => `${fmt(x * 100, 2)}%`;

function quantile(sorted, q) {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Per kind: the measured invocations of a day's dump ({ cpu }: bench/day.mjs --dump). */
function kindsOf(dump, part = "cpu") {
  const d = dump[part];
  const kinds = {};
  for (const [k, v] of Object.entries(d.fetch)) kinds[k.startsWith("inbox") ? k : `API ${k}`] = v;
  kinds["JOBS batch"] = d.jobs;
  kinds["DELIVERY invocation"] = d.delivery;
  kinds.cron = [...d.cron.light, ...d.cron.heavy];
  return kinds;
}

/** Mean D1 round trips per invocation of a kind (the entry's count; an inbox POST's after-response work included). */
function meanRt(values) {
  const v = (values ?? []).filter((x) => Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
}

function stats(values) {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return { n: s.length, over: s.filter((v) => v > LIMIT_MS).length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s.at(-1) };
}

function runDay(side) {
  const dump = join(tmpdir(), `tern-day-compare-${process.pid}-${side}.json`);
  rmSync(dump, { force: true });
  const args = [join(dir, "day.mjs"), "--apart", `--fraction=${fraction}`, `--dump=${dump}`, ...(side === "before" ? [`--src=${before}`] : []), ...passOn];
  log(`${side}: node ${args.map((a) => a.replace(dir, "bench")).join(" ")}`);
  const t0 = Date.now();
  // The "before" day's own report goes to stderr (kept out of the printed figures); the "after" day's is printed.
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", side === "after" ? "inherit" : "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 });
  if (side !== "after" && r.stdout) {
    const report = join(tmpdir(), `tern-day-compare-${side}.txt`);
    writeFileSync(report, r.stdout);
    log(`${side}: its day's report is in ${report}`);
  }
  if (r.status !== 0 || !existsSync(dump)) return { error: `the ${side} day failed (exit ${r.status})` };
  const d = JSON.parse(readFileSync(dump, "utf8"));
  rmSync(dump, { force: true });
  log(`${side}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return d;
}

/**
 * The production bundle's gzipped size on each side (a count of issue 34: no worse than before): this tree's, and the
 * before commit's checked out apart (a git worktree sharing this tree's node_modules, so one toolchain builds both).
 * The whole commit, not prepareBefore's src/ alone (what the day runs): built from there, dc3a179's bundle came out
 * 357.6 KiB instead of the 362.3 its own tree builds.
 */
function bundleSizes() {
  const root = join(dir, "..");
  const tmp = mkdtempSync(join(tmpdir(), "tern-day-compare-bundle-"));
  const tree = join(tmp, "before");
  try {
    const add = spawnSync("git", ["worktree", "add", "--detach", "-q", tree, before], { cwd: root, encoding: "utf8" });
    if (add.status !== 0) return { error: `git worktree add ${before}: ${add.stderr.trim()}` };
    symlinkSync(join(root, "node_modules"), join(tree, "node_modules"));
    const b = buildBundle(tree, join(tmp, "out-before"));
    const a = buildBundle(root, join(tmp, "out-after"));
    if (b.error || a.error) return { error: b.error ?? a.error };
    return { before: b.bundle.gzipKiB, after: a.bundle.gzipKiB };
  } finally {
    spawnSync("git", ["worktree", "remove", "--force", tree], { cwd: root });
    rmSync(tmp, { recursive: true, force: true });
  }
}

const table = (rows) => {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => `| ${r.map((c, i) => String(c).padEnd(w[i])).join(" | ")} |`).join("\n");
};

const load0 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const days = {};
for (const side of order) days[side] = runDay(side);
const bundle = bundleSizes();
const load1 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const lines = [];
if (days.before?.error || days.after?.error) {
  lines.push(`Day before/after: ${days.before?.error ?? days.after?.error}: no comparison.`);
} else {
  const kb = kindsOf(days.before);
  const ka = kindsOf(days.after);
  const names = [...new Set([...Object.keys(kb), ...Object.keys(ka)])];
  const rb = kindsOf(days.before, "rts");
  const ra = kindsOf(days.after, "rts");
  const rows = [
    [
      "invocation kind",
      "n before / after",
      "D1 RT mean before / after",
      "over 10 ms before",
      "after",
      "p50 before",
      "after",
      "p99 before",
      "after",
      "p99 not worse",
    ],
  ];
  const worse = [];
  for (const k of names) {
    const b = stats(kb[k] ?? []);
    const a = stats(ka[k] ?? []);
    if (!b.n && !a.n) continue;
    // A kind's p99 rests on its slowest 1%: with fewer than 100 invocations it is the maximum, so it is compared only
    // from 100 up, with 10% of slack for the machine (the same code's p99 moves that much between two runs).
    const judged = b.n >= 100 && a.n >= 100;
    const ok = !judged || a.p99 <= b.p99 * 1.1;
    if (!ok) worse.push(k);
    rows.push([
      k,
      `${b.n} / ${a.n}`,
      `${fmt(meanRt(rb[k]))} / ${fmt(meanRt(ra[k]))}`,
      `${b.over} (${pct(b.over / Math.max(1, b.n))})`,
      `${a.over} (${pct(a.over / Math.max(1, a.n))})`,
      fmt(b.p50),
      fmt(a.p50),
      fmt(b.p99),
      fmt(a.p99),
      judged ? (ok ? "✓" : "✗") : "(n < 100)",
    ]);
  }
  const all = (kinds) => stats(Object.values(kinds).flat());
  const b = all(kb);
  const a = all(ka);
  const shareB = b.over / Math.max(1, b.n);
  const shareA = a.over / Math.max(1, a.n);
  rows.push([
    "all",
    `${b.n} / ${a.n}`,
    `${fmt(meanRt(Object.values(rb).flat()))} / ${fmt(meanRt(Object.values(ra).flat()))}`,
    `${b.over} (${pct(shareB)})`,
    `${a.over} (${pct(shareA)})`,
    fmt(b.p50),
    fmt(a.p50),
    fmt(b.p99),
    fmt(a.p99),
    "",
  ]);
  console.log("");
  console.log(
    `The day before/after (issue 34 point 2; before = ${before}'s src/, after = this tree; bench/day.mjs --apart --fraction=${fraction} ` +
      `each, one after the other; load average ${load0} at the start, ${load1} at the end). CPU ms per invocation of the ` +
      `measured workerd (the Worker alone: an inbox POST with its after-response processing, a JOBS batch, a DELIVERY pack, a cron run):`,
  );
  console.log(table(rows));
  const halved = shareA <= shareB * GOAL_SHARE;
  lines.push(
    `Day (--apart, ${fraction} of it; Worker CPU per invocation, D1/DOs/R2/queues apart): share over 10 ms ${pct(shareB)} → ${pct(shareA)} ` +
      `(${shareA > 0 ? fmt(shareB / shareA, 2) : "∞"}× less, goal ≥ ${1 / GOAL_SHARE}×) ${halved ? "✓" : "✗"}; ` +
      `no kind's p99 worse (kinds of ≥ 100 invocations, 10% slack): ${worse.length ? `✗ (${worse.join(", ")})` : "✓"}`,
  );
  // The counts (issue 34: none worse than before), a whole day each, as each day's report gives them.
  const cb = days.before.counts;
  const ca = days.after.counts;
  if (cb && ca) {
    const countRows = [["count (a day)", "before", "after", "after ÷ before", "not worse"]];
    const worseCounts = [];
    for (const [name, b] of Object.entries(cb)) {
      const a = ca[name];
      if (typeof a !== "number") continue;
      const ok = a <= b;
      if (!ok) worseCounts.push(name);
      countRows.push([name, Math.round(b).toLocaleString("en-US"), Math.round(a).toLocaleString("en-US"), b > 0 ? fmt(a / b, 3) : "–", ok ? "✓" : "✗"]);
    }
    if (bundle.error) {
      worseCounts.push("bundle size (not measured)");
      log(`bundle: ${bundle.error}`);
    } else {
      const ok = bundle.after <= bundle.before;
      if (!ok) worseCounts.push("bundle size");
      countRows.push(["bundle, gzipped KiB", fmt(bundle.before), fmt(bundle.after), fmt(bundle.after / bundle.before, 3), ok ? "✓" : "✗"]);
    }
    console.log("");
    console.log(table(countRows));
    lines.push(`Day counts (a day each, before → after): ${worseCounts.length ? `✗ worse: ${worseCounts.join(", ")}` : "✓ none worse"}`);
  }
  const v = days.after.verify;
  if (v) {
    lines.push(
      `verify_credentials ÷ no-op (--apart, the Worker alone, alternating batches of 200 after a warm batch; the after day's calibration): ` +
        `${fmt(v.verify, 2)} / ${fmt(v.noop, 2)} ms = ${fmt(v.ratio, 2)}× ${v.ratio <= 2.5 ? "✓" : "✗"} (goal ≤ 2.5×)` +
        (v.perRound ? `; ${v.rounds} alternating rounds: ${v.perRound}` : ""),
    );
  }
}
for (const l of lines) console.log(l);
// A day that failed is a failed run (the summary says which).
if (days.before?.error || days.after?.error) process.exitCode = 1;
if (summaryFile) appendFileSync(summaryFile, `${lines.join("\n")}\n`);
