// scripts/local-migrations.mjs against wrangler's own `d1 migrations apply --local`: the same database, the same
// bookkeeping, so either can go on from the other; a second run applies nothing; a failing file stops the run with its
// name and leaves no half of itself behind.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Miniflare } from "miniflare";
import { applyLocalMigrations, localD1Databases } from "../../scripts/local-migrations.mjs";
import { nodeBin } from "../../scripts/node.mjs";
import { quietEnv, root } from "../support/server.mjs";

const dirs = [];
const scratch = (prefix) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const files = readdirSync(join(root, "migrations")).filter((f) => f.endsWith(".sql"));

test("applies every file once, and wrangler then finds nothing to apply", { timeout: 180_000 }, async () => {
  const state = scratch("tern-mig-");
  assert.equal((await applyLocalMigrations({ persistTo: state })).length, files.length);
  assert.deepEqual(await applyLocalMigrations({ persistTo: state }), []);
  const r = spawnSync(
    nodeBin,
    [join(root, "node_modules", "wrangler", "bin", "wrangler.js"), "d1", "migrations", "list", "DB", "--local", "--persist-to", state],
    {
      cwd: root,
      env: quietEnv,
      encoding: "utf8",
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /No migrations to apply/);
});

test("goes on after wrangler's files, and a failing file names itself and leaves nothing of itself", { timeout: 180_000 }, async () => {
  const state = scratch("tern-mig-");
  const dir = scratch("tern-mig-files-");
  cpSync(join(root, "migrations"), dir, { recursive: true });
  const first = await applyLocalMigrations({ persistTo: state, migrationsDir: dir });
  assert.equal(first.length, files.length);
  writeFileSync(join(dir, "9998_more.sql"), "CREATE TABLE tern_mig_test (id INTEGER);\nINSERT INTO tern_mig_test VALUES (1);\n");
  writeFileSync(join(dir, "9999_broken.sql"), "CREATE TABLE tern_mig_half (id INTEGER);\nINSERT INTO no_such_table VALUES (1);\n");
  await assert.rejects(applyLocalMigrations({ persistTo: state, migrationsDir: dir }), /migration 9999_broken\.sql failed: .*no such table/);

  const mf = new Miniflare({ modules: true, script: "export default {}", defaultPersistRoot: join(state, "v3"), d1Databases: localD1Databases() });
  try {
    const db = await mf.getD1Database("DB");
    const names = (await db.prepare("SELECT name FROM d1_migrations ORDER BY id").all()).results.map((r) => r.name);
    assert.deepEqual(names.slice(-1), ["9998_more.sql"]);
    const tables = (await db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'tern_mig_%' ORDER BY name").all()).results.map((r) => r.name);
    assert.deepEqual(tables, ["tern_mig_test"]);
  } finally {
    await mf.dispose();
  }
});
