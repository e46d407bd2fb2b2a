// Applies migrations/*.sql to the local D1 database, as `wrangler d1 migrations apply DB --local` does, in one Miniflare.
//
// Why our own: wrangler starts a fresh Miniflare (a workerd process) for every migration file, ~0.5 s of CPU each, so
// the 46 files took 46-55 s on a busy 2-core machine: the first `npm run dev` waited that long, and the e2e template
// and the dev-server test timed out under load. Here one runtime applies them all in a few seconds.
//
// Same result as wrangler's: the same database (the binding's id, or the binding name when wrangler.toml has no id,
// under <persistTo>/v3/d1), the same `d1_migrations` table and rows, each file with its row in one batch (one
// transaction), files in name order, applied ones skipped, so either tool can go on from the other.
//
//   node scripts/local-migrations.mjs [--persist-to DIR] [--migrations-dir DIR]   (prints how many files it applied)
//   (--migrations-dir: another tree's files, as the benchmark's "before" side applies its commit's own schema)
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from "wrangler";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const TABLE = "d1_migrations"; // wrangler's default (wrangler.toml sets no migrations_table)

/** Miniflare's `d1Databases` for the binding DB as wrangler keys it locally: its id, or the binding name without one. */
export function localD1Databases(config = join(root, "wrangler.toml")) {
  // Quietly: wrangler would say "Using secrets defined in .dev.vars" on stdout, the channel of a test runner here.
  const level = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "warn";
  let d1;
  try {
    d1 = unstable_getMiniflareWorkerOptions(config).workerOptions.d1Databases ?? {};
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
  const id = Array.isArray(d1) ? d1.find((b) => b === "DB") : d1.DB;
  if (!id) throw new Error(`no D1 binding DB in ${config}`);
  return { DB: typeof id === "string" ? id : id.id };
}

/**
 * Applies the files of `migrationsDir` that the local database has not seen. `persistTo`: the state directory
 * (wrangler's `--persist-to`; default `.wrangler/state`). Resolves to the names applied, in order.
 */
export async function applyLocalMigrations({
  persistTo = join(root, ".wrangler", "state"),
  config = join(root, "wrangler.toml"),
  migrationsDir = join(root, "migrations"),
} = {}) {
  const mf = new Miniflare({
    modules: true,
    script: "export default {}",
    defaultPersistRoot: join(persistTo, "v3"),
    d1Databases: localD1Databases(config),
    cf: false,
  });
  try {
    const db = await mf.getD1Database("DB");
    await db
      .prepare(
        `CREATE TABLE IF NOT EXISTS ${TABLE}(
          id         INTEGER PRIMARY KEY AUTOINCREMENT,
          name       TEXT UNIQUE,
          applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
        )`,
      )
      .run();
    const seen = new Set((await db.prepare(`SELECT name FROM ${TABLE}`).all()).results.map((r) => r.name));
    const files = readdirSync(migrationsDir)
      .filter((f) => f.endsWith(".sql"))
      .sort();
    const applied = [];
    for (const name of files) {
      if (seen.has(name)) continue;
      const queries = unstable_splitSqlQuery(readFileSync(join(migrationsDir, name), "utf8"));
      try {
        await db.batch([...queries.map((q) => db.prepare(q)), db.prepare(`INSERT INTO ${TABLE} (name) VALUES (?)`).bind(name)]);
      } catch (e) {
        throw new Error(`migration ${name} failed: ${e?.cause?.message ?? e?.message ?? e}`);
      }
      applied.push(name);
    }
    return applied;
  } finally {
    await mf.dispose();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const persistTo = arg("--persist-to");
  const migrationsDir = arg("--migrations-dir");
  try {
    const applied = await applyLocalMigrations({ persistTo, ...(migrationsDir ? { migrationsDir } : {}) });
    console.log(applied.length ? `applied ${applied.length} migration file(s)` : "already up to date");
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  }
}
