#!/usr/bin/env node
// Part of `npm run check`: keeps work out of the Worker's script startup (docs/architecture.md, "Startup is mostly
// compiling"). Everything a module builds at load is paid by every cold isolate, whatever it serves. Refused in src/:
//   - a zod schema built at module level (a top-level `const … = z.…`, or a top-level statement starting with
//     `z.`/`zStr(`/`zArray(`): wrap it in `lazy(() => …)` (src/lib/limits/lazy.ts) and call it where it is used;
//   - a regular expression with Unicode property classes (`\p{…}`) created at module level: the same;
//   - a drizzle table built at module level (`const … = sqliteTable(…)`): declare it as
//     `lazyTable(() => sqliteTable(…))` (src/db/schema/lazy-table.ts);
//   - `new Hono` outside src/app.ts: route modules declare their routes on a `routeGroup()` (src/route-group.ts).
// A line-based scan, not a parser: module level is a line that starts in column 0, and a declaration runs until the
// next line that does. The few shared pieces (zBool, zId, zInt in src/lib/http/params.ts) are allowed by name.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ALLOWED = new Set(["src/lib/http/params.ts:zBool", "src/lib/http/params.ts:zId", "src/lib/http/params.ts:zInt"]);
const HONO_OK = new Set(["src/app.ts"]);

const problems = [];
for (const name of readdirSync(join(root, "src"), { recursive: true }).filter((n) => /\.tsx?$/.test(n))) {
  const path = join(root, "src", name);
  const rel = relative(root, path);
  const lines = readFileSync(path, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/\bnew Hono\b/.test(line) && !HONO_OK.has(rel)) problems.push(`${rel}:${i + 1}: new Hono outside src/app.ts: use routeGroup()`);
    const decl = /^(?:export )?const (\w+)(?::[^=]+)? = (.*)$/.exec(line);
    const bare = /^(z\.|zStr\(|zArray\()/.test(line);
    if (!decl && !bare) continue;
    // The statement: this line and the indented ones after it.
    let j = i + 1;
    while (j < lines.length && /^(\s|\)|\]|\}|$)/.test(lines[j]) && lines[j] !== "") j++;
    const text = [decl ? decl[2] : line, ...lines.slice(i + 1, j)].join("\n");
    const init = decl ? decl[2] : line;
    if (decl && (/^lazy\(/.test(init) || /^(async\s+)?(\([^)]*\)|\w+|<[^>]*>\s*\([^)]*\))\s*(:[^=]+)?=>/.test(init) || /^function\b/.test(init))) continue;
    if (decl && ALLOWED.has(`${rel}:${decl[1]}`)) continue;
    if (decl && /^sqliteTable\(/.test(init)) {
      problems.push(`${rel}:${i + 1}: a table built at load: declare it as lazyTable(() => sqliteTable(…))`);
      continue;
    }
    if (/(^|[^\w.])z\s*(\.|$)|^z$|\bzStr\(|\bzArray\(/m.test(text)) problems.push(`${rel}:${i + 1}: a zod schema built at load: wrap it in lazy(() => …)`);
    else if (/\\p\{/.test(text) && /(^|[=(,\s])\/.*\\p\{.*\/[a-z]*u|new RegExp\(/.test(text))
      problems.push(`${rel}:${i + 1}: a \\p{…} regular expression built at load: wrap it in lazy(() => …)`);
  }
}
for (const p of problems) console.error(p);
if (problems.length) {
  console.error(`${problems.length} thing(s) built at the Worker's startup (scripts/check-startup.mjs)`);
  process.exit(1);
}
