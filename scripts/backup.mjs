#!/usr/bin/env node
// Backup and restore of Tern's D1 database, table by table, because `wrangler d1 export` refuses a database that
// holds an FTS5 table (workers-sdk issues 6305 and 9519; in 9519 the failed export also left the database answering
// "Currently processing a long-running export" for a while). Never run `wrangler d1 export` on this database.
//
//   npm run backup  -- --remote [--database DB] [--out backups/x.sql] [--page 200]
//   npm run restore -- backups/x.sql --remote [--database DB] [--force]
//   (--local [--persist-to DIR] instead of --remote for the local state of `wrangler dev`)
//
// Backup: reads the schema from sqlite_master, then every ordinary table in pages (by rowid, or by primary key for a
// table without rowid; 20 tables per `wrangler d1 execute --json` call). SQLite itself writes each row as an INSERT
// statement with quote() (REALs with 17 digits), so no value passes through a JS number: 64-bit integers (the search
// index's rowids) stay exact. The FTS5 index and its shadow tables are not copied: `statuses_fts` is an
// external-content index over `status_search`, which is copied like any table. The file has two parts: tables, rows,
// indexes and views; then, after the line `-- @tern-backup derived`, what is rebuilt rather than copied: the virtual
// tables, their 'rebuild', and the triggers (created after the rows, so counter triggers do not count restored rows
// twice).
//
// Restore (into an EMPTY database: `wrangler d1 create`, point wrangler.toml at it): the first part through
// `wrangler d1 execute --file` (D1's import), the second through `--command`, then a check that every table has the
// row count the backup recorded and that the FTS5 index passes its integrity-check. D1 Time Travel
// (`wrangler d1 time-travel restore DB --timestamp …`) is the other road back, for the last 30 days: see README.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodeBin } from "./node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");

export const DERIVED_MARKER = "-- @tern-backup derived";
const HEADER_PREFIX = "-- @tern-backup ";
const TABLES_PER_CALL = 20;
/** Shadow tables FTS modules create next to a virtual table `x` (x_data, x_idx …). */
const SHADOW_SUFFIXES = { fts5: ["data", "idx", "content", "docsize", "config"], fts4: ["content", "segments", "segdir", "docsize", "stat"] };

export const ident = (name) => `"${String(name).replace(/"/g, '""')}"`;

/**
 * Sorts sqlite_master rows ({type, name, tbl_name, sql}) into what a backup copies and recreates: ordinary `tables`
 * (rows copied), `indexes` and `views` (recreated after the rows), `virtual` tables (recreated in the derived part:
 * external-content FTS is rebuilt, other FTS tables have their rows copied there), `triggers` (derived part), and
 * `skipped` (SQLite's and D1's internal tables, FTS shadow tables).
 */
export function planBackup(rows) {
  const plan = { tables: [], indexes: [], views: [], virtual: [], triggers: [], skipped: [] };
  const shadows = new Set();
  for (const r of rows) {
    if (r.type !== "table" || !/^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql ?? "")) continue;
    const module = /USING\s+(\w+)/i.exec(r.sql)?.[1]?.toLowerCase() ?? "";
    const suffixes = SHADOW_SUFFIXES[module === "fts3" ? "fts4" : module] ?? [];
    for (const s of suffixes) shadows.add(`${r.name}_${s}`);
    const content = /\bcontent\s*=\s*'([^']*)'/i.exec(r.sql)?.[1];
    // content='x': an index over table x, rebuilt from it; content='': contentless, nothing to copy or rebuild from.
    plan.virtual.push({ name: r.name, sql: r.sql, rebuild: content !== undefined && content !== "", contentless: content === "" });
  }
  for (const r of rows) {
    if (!r.sql || r.name.startsWith("sqlite_") || r.name.startsWith("_cf_") || shadows.has(r.name)) {
      if (r.type === "table") plan.skipped.push(r.name);
      continue;
    }
    if (r.type === "table") {
      if (plan.virtual.some((v) => v.name === r.name)) continue;
      plan.tables.push({ name: r.name, sql: r.sql, withoutRowid: /WITHOUT\s+ROWID\s*$/i.test(r.sql) });
    } else if (r.type === "index") plan.indexes.push(r.sql);
    else if (r.type === "view") plan.views.push(r.sql);
    else if (r.type === "trigger") plan.triggers.push(r.sql);
  }
  return plan;
}

/** SQLite's own literal for a column's value: quote(), but REALs with all 17 significant digits. */
const literal = (col) => `CASE WHEN typeof(${ident(col)}) = 'real' THEN printf('%!.17g', ${ident(col)}) ELSE quote(${ident(col)}) END`;

/** One SQL literal as quote() writes it: a string, a number, a blob or NULL. */
const SQL_LITERAL = /^(?:'(?:[^']|'')*'|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|X'[0-9A-Fa-f]*'|NULL)$/;

/**
 * One page of a table as INSERT statements written by SQLite: rows after rowid `after` (a decimal string, exact); for
 * a table without rowid, rows after the primary key `after` (a JSON array of the key's columns as quote() wrote them),
 * in key order, so each page is a range of the key and a backup reads each row once. Columns `rowid` first for virtual
 * tables whose rows are copied.
 */
export function pageQuery(table, columns, { after = null, limit = 200, withoutRowid = false, key = [] } = {}) {
  const cols = columns.map(ident).join(", ");
  const values = columns.map((c) => literal(c)).join(" || ', ' || ");
  const insert = `'INSERT INTO ${ident(table).replace(/'/g, "''")} (${cols.replace(/'/g, "''")}) VALUES (' || ${values} || ');'`;
  if (withoutRowid) {
    if (!key.length) throw new Error(`${table}: a table without rowid needs its primary key`);
    const keyCols = key.map(ident).join(", ");
    const cursor = `json_array(${key.map((k) => `quote(${ident(k)})`).join(", ")})`;
    let where = "";
    if (after !== null) {
      const lits = JSON.parse(after);
      if (!Array.isArray(lits) || lits.length !== key.length || !lits.every((l) => typeof l === "string" && SQL_LITERAL.test(l))) {
        throw new Error(`bad cursor ${after}`);
      }
      where = ` WHERE (${keyCols}) > (${lits.join(", ")})`;
    }
    return `SELECT ${cursor} AS r, ${insert} AS s FROM ${ident(table)}${where} ORDER BY ${keyCols} LIMIT ${limit}`;
  }
  if (after !== null && !/^-?\d{1,20}$/.test(after)) throw new Error(`bad cursor ${after}`);
  const where = after === null ? "" : ` WHERE rowid > ${after}`;
  return `SELECT CAST(rowid AS TEXT) AS r, ${insert} AS s FROM ${ident(table)}${where} ORDER BY rowid LIMIT ${limit}`;
}

/** The statements of the derived part: virtual tables, their rebuild, then the triggers. */
export function derivedStatements(plan) {
  const out = [];
  for (const v of plan.virtual) {
    out.push(`${v.sql};`);
    if (v.rebuild) out.push(`INSERT INTO ${ident(v.name)}(${ident(v.name)}) VALUES ('rebuild');`);
  }
  return out;
}

/** Splits a backup file into its two parts and reads the header (row counts per table). */
export function readBackup(text) {
  const at = text.indexOf(`\n${DERIVED_MARKER}\n`);
  if (at < 0) throw new Error("not a Tern backup (no derived part)");
  const first = text.slice(0, text.indexOf("\n"));
  if (!first.startsWith(HEADER_PREFIX)) throw new Error("not a Tern backup (no header)");
  return { header: JSON.parse(first.slice(HEADER_PREFIX.length)), main: text.slice(0, at + 1), derived: text.slice(at + DERIVED_MARKER.length + 2) };
}

// ---- wrangler ----

function parseArgs(argv) {
  const o = { positional: [], database: "DB", local: false, remote: false, persistTo: null, config: null, out: null, page: 200, force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--local") o.local = true;
    else if (a === "--remote") o.remote = true;
    else if (a === "--force") o.force = true;
    else if (a === "--database") o.database = next();
    else if (a === "--persist-to") o.persistTo = next();
    else if (a === "--config" || a === "-c") o.config = next();
    else if (a === "--out") o.out = next();
    else if (a === "--page") o.page = Math.max(1, Math.min(1000, Number(next()) || 200));
    else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else o.positional.push(a);
  }
  if (o.local === o.remote) throw new Error("say --local (the state of `wrangler dev`) or --remote (the deployed database)");
  return o;
}

function wrangler(o, args, { json = true } = {}) {
  const full = ["d1", "execute", o.database, ...args, o.local ? "--local" : "--remote", "--yes"];
  if (json) full.push("--json");
  if (o.persistTo) full.push("--persist-to", o.persistTo);
  if (o.config) full.push("--config", o.config);
  const r = spawnSync(nodeBin, [wranglerBin, ...full], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 30,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed (${r.status}):\n${(r.stderr || "").slice(-2000)}\n${(r.stdout || "").slice(-2000)}`);
  if (!json) return r.stdout;
  const start = r.stdout.indexOf("[");
  return JSON.parse(r.stdout.slice(start));
}

/** Runs `;`-separated statements in one call; one result array per statement. */
const query = (o, sql) => wrangler(o, ["--command", sql]).map((x) => x.results ?? []);

const SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid";

async function backup(o) {
  const started = new Date();
  const [schema] = query(o, SCHEMA_SQL);
  const plan = planBackup(schema);
  const copied = [
    ...plan.tables.map((t) => ({ ...t, derived: false })),
    ...plan.virtual.filter((v) => !v.rebuild && !v.contentless).map((v) => ({ name: v.name, derived: true, withoutRowid: false, virtual: true })),
  ];
  for (const v of plan.virtual.filter((x) => x.contentless))
    console.warn(`! ${v.name} is a contentless FTS table: it cannot be copied or rebuilt; refill it after the restore`);

  // Columns and row counts, in one call.
  const info = query(o, copied.map((t) => `PRAGMA table_info(${ident(t.name)}); SELECT count(*) AS n FROM ${ident(t.name)}`).join("; "));
  const counts = {};
  copied.forEach((t, i) => {
    t.columns = info[2 * i].map((c) => c.name);
    t.key = info[2 * i]
      .filter((c) => Number(c.pk) > 0)
      .sort((a, b) => Number(a.pk) - Number(b.pk))
      .map((c) => c.name);
    if (t.virtual) t.columns = ["rowid", ...t.columns];
    counts[t.name] = Number(info[2 * i + 1][0]?.n ?? 0);
  });

  const out = resolve(o.out ?? join(root, "backups", `tern-${o.database}-${o.local ? "local" : "remote"}-${started.toISOString().replace(/[:.]/g, "-")}.sql`));
  mkdirSync(dirname(out), { recursive: true });
  const file = createWriteStream(out);
  const write = (s) => file.write(`${s}\n`);
  write(`${HEADER_PREFIX}${JSON.stringify({ version: 1, createdAt: started.toISOString(), database: o.database, counts })}`);
  write(`-- Tern D1 backup. Restore into an EMPTY database: npm run restore -- <this file> --remote (see scripts/backup.mjs).`);
  for (const t of plan.tables) write(`${t.sql};`);

  const derivedRows = [];
  const state = copied.map((t) => ({ t, after: null, done: counts[t.name] === 0 }));
  let calls = 0;
  for (let pending = state.filter((s) => !s.done); pending.length; pending = state.filter((s) => !s.done)) {
    const batch = pending.slice(0, TABLES_PER_CALL);
    const pages = query(
      o,
      batch.map((s) => pageQuery(s.t.name, s.t.columns, { after: s.after, limit: o.page, withoutRowid: s.t.withoutRowid, key: s.t.key })).join(";\n"),
    );
    calls++;
    batch.forEach((s, i) => {
      const rows = pages[i];
      for (const r of rows) {
        if (s.t.derived) derivedRows.push(r.s);
        else write(r.s);
      }
      if (rows.length < o.page) s.done = true;
      else s.after = rows[rows.length - 1].r;
    });
    process.stderr.write(`\r› ${state.filter((s) => s.done).length}/${state.length} tables copied (${calls} calls)`);
  }
  process.stderr.write("\n");
  for (const s of plan.indexes) write(`${s};`);
  for (const s of plan.views) write(`${s};`);
  write(DERIVED_MARKER);
  for (const s of derivedStatements(plan)) write(s);
  // Copied rows of non-rebuildable virtual tables, before the triggers.
  for (const s of derivedRows) write(s);
  for (const s of plan.triggers) write(`${s};`);
  await new Promise((r, j) => file.end((e) => (e ? j(e) : r())));
  const rows = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `✔ ${out}\n  ${copied.length} tables, ${rows} rows; skipped ${plan.skipped.length} (${plan.skipped.join(", ") || "none"}); index rebuilt on restore: ${
      plan.virtual
        .filter((v) => v.rebuild)
        .map((v) => v.name)
        .join(", ") || "none"
    }`,
  );
  return out;
}

async function restore(o) {
  const path = o.positional[0];
  if (!path) throw new Error("which backup file? npm run restore -- backups/<file>.sql --remote");
  const { header, main, derived } = readBackup(readFileSync(path, "utf8"));
  const [existing] = query(
    o,
    "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'",
  );
  if (Number(existing[0]?.n ?? 0) > 0 && !o.force) {
    throw new Error(`the target database already has tables: restore into a new, empty one (or pass --force to add to it)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "tern-restore-"));
  try {
    const mainFile = join(dir, "main.sql");
    writeFileSync(mainFile, main);
    console.log("› tables, rows, indexes (D1 import)…");
    wrangler(o, ["--file", mainFile], { json: false });
    console.log("› search index rebuild and triggers…");
    if (derived.trim()) query(o, derived);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Check: every table's row count as recorded, and the rebuilt index sound.
  const names = Object.keys(header.counts);
  const checks = names.map((n) => `SELECT count(*) AS n FROM ${ident(n)}`);
  const [schema] = query(o, SCHEMA_SQL);
  const fts = planBackup(schema).virtual.filter((v) => v.rebuild);
  for (const v of fts) checks.push(`INSERT INTO ${ident(v.name)}(${ident(v.name)}) VALUES ('integrity-check')`);
  const res = query(o, checks.join("; "));
  const wrong = names.flatMap((n, i) => (Number(res[i][0]?.n) === header.counts[n] ? [] : [`${n}: ${res[i][0]?.n} rows, the backup had ${header.counts[n]}`]));
  if (wrong.length) throw new Error(`restored, but counts differ:\n  ${wrong.join("\n  ")}`);
  console.log(`✔ restored ${names.length} tables from ${path} (backup of ${header.createdAt}); rebuilt ${fts.map((v) => v.name).join(", ") || "no index"}`);
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const o = parseArgs(rest);
  if (command === "backup") await backup(o);
  else if (command === "restore") await restore(o);
  else throw new Error("usage: backup.mjs backup|restore …");
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((e) => {
    console.error(`✖ ${e.message}`);
    process.exit(1);
  });
}
