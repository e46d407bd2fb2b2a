#!/usr/bin/env node
// `npm test`: the whole suite: the code gate (types, lint, format, layers), vitest (workerd integration + unit),
// node:test (e2e against `wrangler dev` + browser in chromium + test/tools, the project's own scripts), federation (a
// fedify ActivityPub server against `wrangler dev`).
// Every stage runs even if an earlier one failed; the last line is the aggregate `N passed, N failed[, N skipped]`
// and the exit code is non-zero if anything failed.
//   npm test -- vitest node      only some stages (typecheck, vitest, node, federation)
//
// To keep the suite near five minutes on two cores, work that does not compete for the same thing overlaps: the code
// gate (one tsc/biome process at a time) runs while vitest runs, and the node:test files (each with its own
// `wrangler dev`, mostly waiting on queues and sockets) run side by side, federation's included. Their output is
// held and printed whole, one file after another, so it reads as if they had run in turn. TERN_TEST_SERIAL=1 runs
// everything one thing at a time instead.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { runOnRecentNode } from "./node.mjs";

// The tools need Node 22.12+: on an older Node this goes on under the bundled one (scripts/node.mjs).
await runOnRecentNode();

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (pkg, file) => join(root, "node_modules", pkg, file);
const out = mkdtempSync(join(tmpdir(), "tern-test-"));
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const inCI = !!process.env.CI && process.env.CI !== "false" && process.env.CI !== "0";
const serial = !!process.env.TERN_TEST_SERIAL && process.env.TERN_TEST_SERIAL !== "0";

const STAGES = ["typecheck", "vitest", "node", "federation"];
const wanted = process.argv.slice(2);
for (const w of wanted) if (!STAGES.includes(w)) throw new Error(`unknown stage ${w}; stages: ${STAGES.join(", ")}`);
const want = (name) => wanted.length === 0 || wanted.includes(name);

const stages = [];
const total = { passed: 0, failed: 0, skipped: 0 };

/**
 * Runs `node <args>`. With `capture`, its output is kept (and returned) instead of going to the terminal.
 * @returns {Promise<{ code: number, output: string }>}
 */
function run(args, { env = {}, capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
      env: { ...process.env, ...(capture ? { FORCE_COLOR: process.stdout.isTTY ? "1" : "0" } : {}), ...env },
    });
    let output = "";
    if (capture) {
      child.stdout.on("data", (c) => (output += c));
      child.stderr.on("data", (c) => (output += c));
    }
    child.on("error", (e) => {
      output += `${e.stack ?? e}\n`;
      resolve({ code: 1, output });
    });
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

function record(name, counts, note = "") {
  stages.push({ name, ...counts, note });
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}

/** The first non-empty line of a failure message, cut to 300 characters. */
function firstLine(message) {
  const line = (message ?? "").split("\n").find((l) => l.trim()) ?? "";
  return line.trim().slice(0, 300);
}

function header(title) {
  console.log(`\n━━━ ${title} ${"━".repeat(Math.max(0, 70 - title.length))}\n`);
}

// 1. The code gate (`npm run check`: types under the strict flags, lint, format): one check, pass or fail. Started
//    first; unless serial, its output waits until vitest's is done.
let check;
if (want("typecheck")) {
  const overlap = !serial && want("vitest");
  if (!overlap) header("check (types, lint, format)");
  check = run([join(root, "scripts", "check.mjs")], { capture: overlap }).then((r) => ({ ...r, overlap }));
  if (!overlap) await check;
}

// 2. vitest: counts from its JSON report. A file that fails to load has no test results of its own: count it once.
let vitest;
if (want("vitest")) {
  header("vitest (integration in workerd + unit)");
  const jsonFile = join(out, "vitest.json");
  const { code } = await run([bin("vitest", "vitest.mjs"), "run", "--reporter=default", "--reporter=json", `--outputFile.json=${jsonFile}`]);
  const c = { passed: 0, failed: 0, skipped: 0 };
  let note = "";
  if (existsSync(jsonFile)) {
    const r = JSON.parse(readFileSync(jsonFile, "utf8"));
    c.passed = r.numPassedTests ?? 0;
    c.failed = r.numFailedTests ?? 0;
    c.skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    for (const file of r.testResults ?? []) {
      const failedInside = (file.assertionResults ?? []).some((a) => a.status === "failed");
      // Named again in the summary: a long run's log may be read from its end only.
      for (const a of file.assertionResults ?? []) {
        if (a.status !== "failed") continue;
        const why = firstLine(a.failureMessages?.[0]);
        note += `\n    ✖ ${relative(root, file.name)} > ${a.fullName ?? a.title}${why ? `: ${why}` : ""}`;
      }
      if (file.status === "failed" && !failedInside) {
        c.failed += 1;
        note += `\n    ${relative(root, file.name)} failed to run: ${(file.message ?? "").split("\n")[0]}`;
      }
    }
  }
  if (code !== 0 && c.failed === 0) {
    c.failed = 1;
    note += `\n    vitest exited with code ${code} without a failing test (see its output above)`;
  }
  vitest = { counts: c, note };
}

if (check) {
  const { code, output, overlap } = await check;
  if (overlap) {
    header("check (types, lint, format) — ran alongside vitest");
    process.stdout.write(output);
  }
  record("typecheck", { passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: 0 });
}
if (vitest) record("vitest", vitest.counts, vitest.note);

// 3. node:test — e2e (masto against wrangler dev) and browser (chromium); 4. federation (a fedify peer against
//    wrangler dev). One `node --test` per file, several at once (each starts its own `wrangler dev` on its own ports
//    and state); TAP goes to a file for the counts, spec output is printed per file for people.
const listTests = (dir) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((f) => f.endsWith(".test.mjs"))
        .sort()
        .map((f) => join(dir, f))
    : [];

/** Runs one test file; resolves to its counts (spec output printed when it is done). */
async function runTestFile(file, { capture }) {
  const tapFile = join(out, `${file.replace(/\W+/g, "-")}.tap`);
  const { code, output } = await run(
    [
      "--test",
      "--test-concurrency=1",
      // Per file. wrangler 4.164 starts ~0.7 s slower than 4.66 did (each `wrangler d1 execute`: 2.5 s against 1.8 s):
      // the backup round trip (dozens of them) takes ~2 minutes alone, over 5 with four files at once on a busy machine.
      "--test-timeout=600000",
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      "--test-reporter=tap",
      `--test-reporter-destination=${tapFile}`,
      file,
    ],
    { capture },
  );
  if (capture) {
    console.log(`── ${file} ${"─".repeat(Math.max(0, 66 - file.length))}`);
    process.stdout.write(output);
  }
  const c = { passed: 0, failed: 0, skipped: 0 };
  let note = "";
  if (existsSync(tapFile)) {
    const tap = readFileSync(tapFile, "utf8");
    // The summary is the last block of `# name N` lines at column 0.
    const num = (key) => {
      const all = [...tap.matchAll(new RegExp(`^# ${key} (\\d+)$`, "gm"))];
      return all.length ? Number(all.at(-1)[1]) : 0;
    };
    c.passed = num("pass");
    c.failed = num("fail") + num("cancelled"); // a failing before() hook cancels its tests
    c.skipped = num("skipped") + num("todo");
    // Each failing test by name (a subtest's line is indented; its parents' failures say only that a child failed).
    for (const m of tap.matchAll(/^\s*not ok \d+ - (.*)$/gm)) note += `\n    ✖ ${file} > ${m[1].trim().slice(0, 300)}`;
  }
  if (code !== 0 && c.failed === 0) {
    c.failed = 1;
    note = `\n    ${file}: node --test exited with code ${code} without a failing test (see its output above)`;
  }
  return { ...c, note };
}

/** Runs `files` at most `limit` at a time; resolves to their results in `files` order. */
async function runTestFiles(files, limit) {
  const results = new Array(files.length);
  let next = 0;
  const capture = limit > 1 && files.length > 1;
  if (capture) console.log(`Running ${files.length} test files, ${limit} at a time; each one's output follows when it ends.\n`);
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      results[i] = await runTestFile(files[i], { capture });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, files.length) }, worker));
  return results;
}

function recordFiles(name, results, { skipped = 0, note = "" } = {}) {
  if (!results.length) return record(name, { passed: 0, failed: 0, skipped }, `${note}\n    no test files`);
  const c = { passed: 0, failed: 0, skipped };
  for (const r of results) {
    c.passed += r.passed;
    c.failed += r.failed;
    c.skipped += r.skipped;
    note += r.note;
  }
  record(name, c, note);
}

const nodeFiles = [];
let skippedBrowserFiles = 0;
if (want("node")) {
  nodeFiles.push(...listTests("test/e2e"), ...listTests("test/tools"));
  const browserFiles = listTests("test/browser");
  if (existsSync(CHROMIUM) || inCI) {
    // In CI a missing chromium is not skipped: the browser test runs and fails, saying why.
    nodeFiles.push(...browserFiles);
  } else {
    skippedBrowserFiles = browserFiles.length;
    console.log(`⚠ Skipping the browser tests (${browserFiles.join(", ")}): no chromium at ${CHROMIUM}.`);
    console.log("  Install it with `apt-get install chromium` (CI does, through .ci/run).\n");
  }
}
const fedFiles = want("federation") ? listTests("test/federation") : [];
const nodeNote = skippedBrowserFiles ? `\n    ${skippedBrowserFiles} browser test file(s) skipped: chromium missing` : "";
// Each file is mostly a `wrangler dev` waiting on queues and sockets: a few side by side fit on two cores.
const fileLimit = serial ? 1 : Math.max(Number(process.env.TERN_NODE_TEST_FILES) || Math.min(4, availableParallelism() + 1), 1);

if (!serial && want("node") && want("federation")) {
  header("node:test (e2e + browser) and federation (fedify peer against wrangler dev)");
  const results = await runTestFiles([...nodeFiles, ...fedFiles], fileLimit);
  recordFiles("node:test", results.slice(0, nodeFiles.length), { skipped: skippedBrowserFiles, note: nodeNote });
  recordFiles("federation", results.slice(nodeFiles.length));
} else {
  if (want("node")) {
    header("node:test (e2e + browser)");
    recordFiles("node:test", await runTestFiles(nodeFiles, fileLimit), { skipped: skippedBrowserFiles, note: nodeNote });
  }
  if (want("federation")) {
    header("federation (fedify peer against wrangler dev)");
    recordFiles("federation", await runTestFiles(fedFiles, fileLimit));
  }
}

rmSync(out, { recursive: true, force: true });

header("summary");
for (const s of stages) {
  console.log(`  ${s.failed ? "✖" : "✔"} ${s.name.padEnd(11)} ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped${s.note}`);
}
console.log("");
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
process.exit(total.failed ? 1 : 0);
