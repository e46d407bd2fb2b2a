#!/usr/bin/env node
// `npm test`: the whole suite, in order: type check, vitest (workerd integration + unit), node:test (e2e against
// `wrangler dev` + browser in chromium), federation (a fedify ActivityPub server against `wrangler dev`). Every
// stage runs even if an earlier one failed; the last line is the aggregate `N passed, N failed[, N skipped]` and
// the exit code is non-zero if anything failed.
//   npm test -- vitest node      only some stages (typecheck, vitest, node, federation)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (pkg, file) => join(root, "node_modules", pkg, file);
const out = mkdtempSync(join(tmpdir(), "tern-test-"));
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const inCI = !!process.env.CI && process.env.CI !== "false" && process.env.CI !== "0";

const STAGES = ["typecheck", "vitest", "node", "federation"];
const wanted = process.argv.slice(2);
for (const w of wanted) if (!STAGES.includes(w)) throw new Error(`unknown stage ${w}; stages: ${STAGES.join(", ")}`);
const want = (name) => wanted.length === 0 || wanted.includes(name);

const stages = [];
const total = { passed: 0, failed: 0, skipped: 0 };

function run(args, env = {}) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  if (r.error) console.error(r.error);
  return r.status ?? 1;
}

function record(name, counts, note = "") {
  stages.push({ name, ...counts, note });
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}

function header(title) {
  console.log(`\n━━━ ${title} ${"━".repeat(Math.max(0, 70 - title.length))}\n`);
}

// 1. The code gate (`npm run check`: types under the strict flags, lint, format): one check, pass or fail.
if (want("typecheck")) {
  header("check (types, lint, format)");
  const code = run([join(root, "scripts", "check.mjs")]);
  record("typecheck", { passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: 0 });
}

// 2. vitest: counts from its JSON report. A file that fails to load has no test results of its own: count it once.
if (want("vitest")) {
  header("vitest (integration in workerd + unit)");
  const jsonFile = join(out, "vitest.json");
  const code = run([bin("vitest", "vitest.mjs"), "run", "--reporter=default", "--reporter=json", `--outputFile.json=${jsonFile}`]);
  const c = { passed: 0, failed: 0, skipped: 0 };
  let note = "";
  if (existsSync(jsonFile)) {
    const r = JSON.parse(readFileSync(jsonFile, "utf8"));
    c.passed = r.numPassedTests ?? 0;
    c.failed = r.numFailedTests ?? 0;
    c.skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    for (const file of r.testResults ?? []) {
      const failedInside = (file.assertionResults ?? []).some((a) => a.status === "failed");
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
  record("vitest", c, note);
}

// 3. node:test — e2e (masto against wrangler dev) and browser (chromium); 4. federation (a fedify peer against
//    wrangler dev). TAP goes to a file for the counts, spec to the terminal for people.
const listTests = (dir) =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((f) => f.endsWith(".test.mjs"))
        .sort()
        .map((f) => join(dir, f))
    : [];

function nodeTestStage(name, files, { skipped = 0, note = "" } = {}) {
  // With no file arguments node --test would go looking for tests everywhere.
  if (!files.length) return record(name, { passed: 0, failed: 0, skipped }, `${note}\n    no test files`);
  const tapFile = join(out, `${name.replace(/\W+/g, "-")}.tap`);
  const code = run([
    "--test",
    "--test-concurrency=1",
    "--test-timeout=300000",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tapFile}`,
    ...files,
  ]);
  const c = { passed: 0, failed: 0, skipped };
  if (existsSync(tapFile)) {
    const tap = readFileSync(tapFile, "utf8");
    // The summary is the last block of `# name N` lines at column 0.
    const num = (key) => {
      const all = [...tap.matchAll(new RegExp(`^# ${key} (\\d+)$`, "gm"))];
      return all.length ? Number(all.at(-1)[1]) : 0;
    };
    c.passed = num("pass");
    c.failed = num("fail") + num("cancelled"); // a failing before() hook cancels its tests
    c.skipped += num("skipped") + num("todo");
  }
  if (code !== 0 && c.failed === 0) {
    c.failed = 1;
    note += `\n    node --test exited with code ${code} without a failing test (see its output above)`;
  }
  record(name, c, note);
}

if (want("node")) {
  header("node:test (e2e + browser)");
  const files = listTests("test/e2e");
  const browserFiles = listTests("test/browser");
  let skippedFiles = 0;
  if (existsSync(CHROMIUM) || inCI) {
    // In CI a missing chromium is not skipped: the browser test runs and fails, saying why.
    files.push(...browserFiles);
  } else {
    skippedFiles = browserFiles.length;
    console.log(`⚠ Skipping the browser tests (${browserFiles.join(", ")}): no chromium at ${CHROMIUM}.`);
    console.log("  Install it with `apt-get install chromium` (CI does, through .ci/run).\n");
  }
  nodeTestStage("node:test", files, {
    skipped: skippedFiles,
    note: skippedFiles ? `\n    ${skippedFiles} browser test file(s) skipped: chromium missing` : "",
  });
}

if (want("federation")) {
  header("federation (fedify peer against wrangler dev)");
  nodeTestStage("federation", listTests("test/federation"));
}

rmSync(out, { recursive: true, force: true });

header("summary");
for (const s of stages) {
  console.log(`  ${s.failed ? "✖" : "✔"} ${s.name.padEnd(11)} ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped${s.note}`);
}
console.log("");
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
process.exit(total.failed ? 1 : 0);
