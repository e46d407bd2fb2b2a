#!/usr/bin/env node
// The layering of src/ (docs/architecture.md "Layers"), two parts:
//   1. imports: dependency-cruiser with .dependency-cruiser.cjs: no upward import, no cycle, the modules that send on
//      a queue imported only by the allowed callers. Violations listed in .dependency-cruiser-known-violations.json
//      (the upward imports that existed when the rules were written) are ignored, and those still present counted; a
//      new one fails, printed with its rule, the two files (or the cycle) and the fix (the rule's comment).
//   2. queue bindings: dependency-cruiser sees imports, not property accesses, so `env.JOBS`, `env.DELIVERY` and the
//      `Queue<…>` type are found here, in the syntax tree of each file (comments and strings do not count): only the
//      files the config lists in `queueBindingFiles` may touch them.
//   3. what services take from env: a file under src/services/ names `Env` only as `Pick<Env, …>` without a queue
//      binding's key, so a service is handed what it uses and never the queues (also found in the syntax tree).
//   node scripts/check-layers.mjs [--root DIR]   DIR (default: the project) holds src/, the config and the baseline
//   node scripts/check-layers.mjs --baseline      writes the baseline again after a move fixed some violations; refuses
//                                                 to add one unless --allow-new is given too
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const project = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const rootAt = args.indexOf("--root");
const root = rootAt >= 0 ? args[rootAt + 1] : project;
const CONFIG = ".dependency-cruiser.cjs";
const BASELINE = ".dependency-cruiser-known-violations.json";
const depcruise = join(project, "node_modules", "dependency-cruiser", "bin", "dependency-cruiser.mjs");
const require = createRequire(import.meta.url);

if (args.includes("--baseline")) {
  // The list only shrinks: a violation it did not hold is refused (fix it instead), unless --allow-new says otherwise.
  const path = join(root, BASELINE);
  const before = existsSync(path) ? readFileSync(path, "utf8") : null;
  const key = (v) => `${v.rule.name}: ${v.from} → ${v.to}`;
  const r = spawnSync(process.execPath, [depcruise, "src", "--config", CONFIG, "--output-type", "baseline", "--output-to", BASELINE], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
  // In Biome's format, which `npm run check` holds every JSON file of the project to.
  const biome = spawnSync(process.execPath, [join(project, "node_modules", "@biomejs", "biome", "bin", "biome"), "format", "--write", BASELINE], {
    cwd: root,
    encoding: "utf8",
  });
  if (biome.status !== 0) process.stderr.write(biome.stdout + biome.stderr);
  const after = JSON.parse(readFileSync(path, "utf8"));
  const had = new Set(before ? JSON.parse(before).map(key) : []);
  const added = before && !args.includes("--allow-new") ? after.filter((v) => !had.has(key(v))) : [];
  if (added.length) {
    writeFileSync(path, before);
    console.log(`✖ ${BASELINE} kept as it was: these violations are new, fix them (or pass --allow-new):`);
    for (const v of added) console.log(`    ${key(v)}`);
    process.exit(1);
  }
  console.log(`${BASELINE}: ${after.length} known violations${before ? ` (${had.size} before)` : ""}`);
  process.exit(biome.status ?? 1);
}

let failed = false;

// 1. Imports. Each new violation is printed with its rule, the two files (or the cycle) and the rule's comment (the fix).
const hasBaseline = existsSync(join(root, BASELINE));
const cruise = spawnSync(
  process.execPath,
  [depcruise, "src", "--config", CONFIG, "--output-type", "json", ...(hasBaseline ? ["--ignore-known", BASELINE] : [])],
  { cwd: root, encoding: "utf8", maxBuffer: 1 << 28 },
);
let result;
try {
  result = JSON.parse(cruise.stdout);
} catch {
  process.stdout.write(cruise.stdout);
  process.stderr.write(cruise.stderr);
  console.log(`✖ dependency-cruiser failed (exit code ${cruise.status})`);
  process.exit(1);
}
const { summary } = result;
const comments = Object.fromEntries(summary.ruleSetUsed.forbidden.map((r) => [r.name, r.comment]));
const fresh = summary.violations.filter((v) => v.rule.severity !== "ignore");
const known = summary.violations.filter((v) => v.rule.severity === "ignore");
for (const v of fresh) {
  const path = v.type === "cycle" ? [v.from, ...v.cycle.map((c) => c.name)].join(" → ") : `${v.from} → ${v.to}`;
  console.log(`\n  error ${v.rule.name}: ${path}\n    ${comments[v.rule.name] ?? ""}`);
}
if (fresh.length) {
  failed = true;
  console.log(`\n✖ ${fresh.length} new layering violation(s) (${summary.totalCruised} modules, ${summary.totalDependenciesCruised} dependencies)`);
} else console.log(`✔ imports point down, no new cycle (${summary.totalCruised} modules, ${summary.totalDependenciesCruised} dependencies)`);
const byRule = {};
for (const v of known) byRule[v.rule.name] = (byRule[v.rule.name] ?? 0) + 1;
const ruleCounts = Object.entries(byRule)
  .sort(([x], [y]) => x.localeCompare(y))
  .map(([rule, n]) => `${rule} ${n}`)
  .join(", ");
console.log(`  known violations left to fix: ${known.length}${known.length ? ` (${ruleCounts}; listed in ${BASELINE})` : ""}`);
const listed = hasBaseline ? JSON.parse(readFileSync(join(root, BASELINE), "utf8")).length : 0;
if (listed > known.length) {
  console.log(`  ${listed - known.length} of the ${listed} in ${BASELINE} no longer occur: node scripts/check-layers.mjs --baseline writes it again`);
  // The list names files: a file moved with its known violation shows as a new one, and the old entry as gone.
  if (fresh.length)
    console.log("  (a new violation of a file that moved is the old one under a new name: --baseline --allow-new takes it in; the diff shows it)");
}

// 2. Queue bindings.
const { queueBindingFiles } = require(join(root, CONFIG));
// TypeScript's JS API (the `typescript` package, 6.0: TypeScript 7, `typescript-native`, which checks the types, has none).
const ts = require(join(project, "node_modules", "typescript"));
const BINDINGS = new Set(["JOBS", "DELIVERY"]);

/**
 * The lines where a file names a queue binding: an identifier JOBS or DELIVERY (`env.JOBS`, `const { JOBS } = env`),
 * `env["JOBS"]`, or the type `Queue<…>`. Files that do not contain those words are not parsed (most of them).
 */
function bindingUses(file, text) {
  if (!/\b(JOBS|DELIVERY|Queue)\b/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = new Set();
  const at = (node) => lines.add(source.getLineAndCharacterOfPosition(node.getStart(source)).line);
  const visit = (node) => {
    if (ts.isIdentifier(node) && BINDINGS.has(node.text)) at(node);
    else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression) && BINDINGS.has(node.argumentExpression.text)) at(node);
    else if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === "Queue") at(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  const textLines = text.split("\n");
  return [...lines].sort((a, b) => a - b).map((line) => `${line + 1}: ${textLines[line].trim()}`);
}

const files = readdirSync(join(root, "src"), { recursive: true })
  .map((f) => join("src", f).split(sep).join("/"))
  .filter((f) => /\.(ts|tsx|mts|cts)$/.test(f))
  .sort();
const stray = [];
for (const file of files) {
  if (queueBindingFiles.includes(file)) continue;
  for (const use of bindingUses(file, readFileSync(join(root, file), "utf8"))) stray.push(`${file}:${use}`);
}
if (stray.length) {
  failed = true;
  console.log(`\n  error queue-binding: ${stray.length} use(s) of a queue binding outside ${queueBindingFiles.join(", ")}:`);
  for (const s of stray) console.log(`    ${s}`);
  console.log(
    "    queue-binding: no service, route, handler or cron is handed a queue binding. Fix: record the effect on the Effects collector it is given\n" +
      "    (src/effects/collector.ts) or return it, and let the senders (src/effects/send.ts, src/federation/outbound/delivery.ts) put it on the queue.\n",
  );
} else {
  console.log(`✔ queue bindings touched only in ${queueBindingFiles.join(", ")} (${files.length} files scanned)`);
}

// 3. What services take from env.
const SERVICES = "src/services/";

/**
 * The lines where a service names the whole Env: the type `Env` anywhere but as the first argument of `Pick<…>`
 * (`env: Env`, `Omit<Env, …>`, `extends Env`), or a `Pick<Env, …>` whose keys name a queue binding.
 */
function wholeEnvUses(file, text) {
  if (!/\bEnv\b/.test(text)) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const lines = new Set();
  const at = (node) => lines.add(source.getLineAndCharacterOfPosition(node.getStart(source)).line);
  const isPick = (node) => ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === "Pick";
  const namesBinding = (node) => {
    let found = false;
    const look = (n) => {
      if (ts.isLiteralTypeNode(n) && ts.isStringLiteralLike(n.literal) && BINDINGS.has(n.literal.text)) found = true;
      ts.forEachChild(n, look);
    };
    look(node);
    return found;
  };
  const visit = (node) => {
    const envRef =
      (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === "Env") ||
      (ts.isExpressionWithTypeArguments(node) && ts.isIdentifier(node.expression) && node.expression.text === "Env");
    if (envRef) {
      const pick = node.parent && isPick(node.parent) && node.parent.typeArguments?.[0] === node ? node.parent : null;
      if (!pick || (pick.typeArguments?.[1] && namesBinding(pick.typeArguments[1]))) at(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const textLines = text.split("\n");
  return [...lines].sort((a, b) => a - b).map((line) => `${line + 1}: ${textLines[line].trim()}`);
}

const whole = [];
for (const file of files.filter((f) => f.startsWith(SERVICES))) {
  for (const use of wholeEnvUses(file, readFileSync(join(root, file), "utf8"))) whole.push(`${file}:${use}`);
}
if (whole.length) {
  failed = true;
  console.log(`\n  error service-env: ${whole.length} use(s) of the whole Env in ${SERVICES}:`);
  for (const s of whole) console.log(`    ${s}`);
  console.log(
    "    service-env: a service takes from env what it uses, never the whole Env (it holds the queue bindings). Fix: type the parameter\n" +
      '    Pick<Env, "MEDIA" | …> (or a named Pick such as ConfigEnv in src/env.ts), without JOBS or DELIVERY.\n',
  );
} else {
  console.log(`✔ services take only what they use from env (${files.filter((f) => f.startsWith(SERVICES)).length} files under ${SERVICES})`);
}
if (relative(project, root)) console.log(`(checked ${root})`);
process.exit(failed ? 1 : 0);
