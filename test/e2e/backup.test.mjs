// `npm run backup` / `npm run restore` (scripts/backup.mjs) on local D1 state: the plan it makes from sqlite_master
// (FTS5 index and shadow tables skipped, rebuilt on restore), and a round trip: a migrated database with a status,
// its search row (an id above 2^53) and a REAL, backed up table by table, restored into an empty database, where the
// rebuilt index finds the status again. A restore into a database that has tables is refused.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { DERIVED_MARKER, derivedStatements, pageQuery, planBackup, readBackup } from "../../scripts/backup.mjs";
import { nodeBin } from "../../scripts/node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const wranglerBin = join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const tmp = mkdtempSync(join(tmpdir(), "tern-backup-test-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function node(args) {
  const r = spawnSync(nodeBin, args, { cwd: root, encoding: "utf8", maxBuffer: 1 << 28, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

function d1(persist, sql) {
  const r = node([wranglerBin, "d1", "execute", "DB", "--local", "--persist-to", persist, "--json", "--command", sql]);
  assert.equal(r.code, 0, r.out);
  return JSON.parse(r.out.slice(r.out.indexOf("["))).map((x) => x.results);
}

describe("backup plan", () => {
  const schema = [
    { type: "table", name: "statuses", sql: "CREATE TABLE statuses (id text PRIMARY KEY)" },
    { type: "index", name: "sqlite_autoindex_statuses_1", sql: null },
    { type: "table", name: "status_search", sql: "CREATE TABLE status_search (id integer PRIMARY KEY, text text)" },
    { type: "table", name: "statuses_fts", sql: "CREATE VIRTUAL TABLE statuses_fts USING fts5(text, content = 'status_search', content_rowid = 'id')" },
    ...["data", "idx", "docsize", "config"].map((s) => ({ type: "table", name: `statuses_fts_${s}`, sql: `CREATE TABLE 'statuses_fts_${s}'(x)` })),
    { type: "table", name: "notes_fts", sql: "CREATE VIRTUAL TABLE notes_fts USING fts5(body)" },
    { type: "table", name: "notes_fts_content", sql: "CREATE TABLE 'notes_fts_content'(id INTEGER PRIMARY KEY, c0)" },
    { type: "table", name: "_cf_METADATA", sql: "CREATE TABLE _cf_METADATA (key INTEGER PRIMARY KEY, value BLOB)" },
    { type: "table", name: "sqlite_sequence", sql: "CREATE TABLE sqlite_sequence(name,seq)" },
    { type: "table", name: "kv", sql: "CREATE TABLE kv (k text PRIMARY KEY, v text) WITHOUT ROWID" },
    { type: "index", name: "statuses_x", sql: "CREATE INDEX statuses_x ON statuses (id)" },
    { type: "trigger", name: "t1", sql: "CREATE TRIGGER t1 AFTER DELETE ON statuses BEGIN DELETE FROM status_search WHERE id = OLD.id; END" },
  ];

  test("copies ordinary tables, skips internal and FTS shadow tables, rebuilds external-content FTS", () => {
    const plan = planBackup(schema);
    assert.deepEqual(
      plan.tables.map((t) => [t.name, t.withoutRowid]),
      [
        ["statuses", false],
        ["status_search", false],
        ["kv", true],
      ],
    );
    assert.deepEqual(plan.skipped.sort(), [
      "_cf_METADATA",
      "notes_fts_content",
      "sqlite_sequence",
      "statuses_fts_config",
      "statuses_fts_data",
      "statuses_fts_docsize",
      "statuses_fts_idx",
    ]);
    assert.deepEqual(
      plan.virtual.map((v) => [v.name, v.rebuild]),
      [
        ["statuses_fts", true],
        ["notes_fts", false],
      ],
    );
    assert.deepEqual(derivedStatements(plan), [`${schema[3].sql};`, `INSERT INTO "statuses_fts"("statuses_fts") VALUES ('rebuild');`, `${schema[8].sql};`]);
    assert.equal(plan.triggers.length, 1);
    assert.equal(plan.indexes.length, 1);
  });

  test("pages by rowid with an exact text cursor, and quotes names", () => {
    const q = pageQuery('we"ird', ["id", "it's"], { after: "112233445566778899", limit: 50 });
    assert.match(q, /FROM "we""ird" WHERE rowid > 112233445566778899 ORDER BY rowid LIMIT 50$/);
    assert.match(q, /CAST\(rowid AS TEXT\) AS r/);
    assert.match(q, /quote\("it's"\)/);
    assert.throws(() => pageQuery("t", ["a"], { after: "1; DROP TABLE t" }));
    // A table without rowid: a range of its primary key after the last row's key, as quote() wrote it.
    assert.match(
      pageQuery("kv", ["k", "v"], { withoutRowid: true, key: ["k"] }),
      /^SELECT json_array\(quote\("k"\)\) AS r, .* FROM "kv" ORDER BY "k" LIMIT 200$/,
    );
    const after = JSON.stringify(["'it''s'", "42"]);
    assert.match(
      pageQuery("feed", ["a", "b"], { withoutRowid: true, key: ["a", "b"], after, limit: 2 }),
      /FROM "feed" WHERE \("a", "b"\) > \('it''s', 42\) ORDER BY "a", "b" LIMIT 2$/,
    );
    for (const bad of [JSON.stringify(["1); DROP TABLE t; --"]), JSON.stringify(["'x"]), JSON.stringify(["1", "2"]), "[1]"]) {
      assert.throws(() => pageQuery("kv", ["k"], { withoutRowid: true, key: ["k"], after: bad }), /bad cursor/);
    }
    assert.throws(() => pageQuery("kv", ["k"], { withoutRowid: true }), /needs its primary key/);
    assert.throws(() => readBackup("CREATE TABLE x (y);\n"), /not a Tern backup/);
  });
});

describe("backup and restore on local state", () => {
  test("a round trip keeps rows exact and the rebuilt index finds them", { timeout: 600_000 }, () => {
    const source = join(tmp, "source");
    const target = join(tmp, "target");
    const file = join(tmp, "backup.sql");
    // Migrated as wrangler would (the same database and d1_migrations rows), in one runtime: wrangler starts one per file.
    const migrated = node(["scripts/local-migrations.mjs", "--persist-to", source]);
    assert.equal(migrated.code, 0, migrated.out);
    d1(
      source,
      `INSERT INTO statuses (id, uri, account_id, local, visibility, text, content, created_at, updated_at)
         VALUES ('00000112233445566778', 'https://tern.test/s/1', '00000000000000000001', 1, 'public', 'it''s a café -- END; $x$', '<p>x</p>', 1, 1);
       INSERT INTO status_search (id, text) VALUES (CAST('00000112233445566778' AS INTEGER), 'it''s a café -- END; $x$ pelican');
       INSERT INTO status_trends (status_id, account_id, score, language, allowed, updated_at) VALUES ('00000112233445566778', '1', 0.1, NULL, 1, 5);
       INSERT INTO home_feed (account_id, status_id, reblog_of_id, author_id) VALUES ('1', 'a', NULL, '1'), ('1', 'b''c', NULL, '1'), ('2', 'a', 'r', '2')`,
    );

    const b = node(["scripts/backup.mjs", "backup", "--local", "--persist-to", source, "--out", file, "--page", "2"]);
    assert.equal(b.code, 0, b.out);
    const text = readFileSync(file, "utf8");
    const { header, derived } = readBackup(text);
    assert.equal(header.counts.statuses, 1);
    assert.equal(header.counts.status_search, 1);
    assert.ok(!("statuses_fts" in header.counts) && !("statuses_fts_data" in header.counts));
    assert.ok(text.includes(`INSERT INTO "status_search" ("id", "text") VALUES (112233445566778, `));
    assert.ok(derived.startsWith("CREATE VIRTUAL TABLE `statuses_fts`"));
    assert.ok(text.indexOf(DERIVED_MARKER) < text.indexOf("CREATE TRIGGER"));

    const r = node(["scripts/backup.mjs", "restore", file, "--local", "--persist-to", target]);
    assert.equal(r.code, 0, r.out);
    const [hit, trend, migrations, feed] = d1(
      target,
      `SELECT printf('%020d', rowid) AS id FROM statuses_fts WHERE statuses_fts MATCH '"pelican" AND "cafe"';
       SELECT score FROM status_trends; SELECT count(*) AS n FROM d1_migrations;
       SELECT account_id AS a, status_id AS s, coalesce(reblog_of_id, '(none)') AS r FROM home_feed ORDER BY 1, 2`,
    );
    assert.deepEqual(hit, [{ id: "00000112233445566778" }]);
    assert.deepEqual(trend, [{ score: 0.1 }]);
    // A table without rowid (its composite key paged 2 rows at a time, a quote in a key): every row, once. (wrangler's
    // JSON shows a NULL as "null", hence the coalesce.)
    assert.deepEqual(feed, [
      { a: "1", s: "a", r: "(none)" },
      { a: "1", s: "b'c", r: "(none)" },
      { a: "2", s: "a", r: "r" },
    ]);
    assert.equal(migrations[0].n, header.counts.d1_migrations);
    // The triggers came back too: deleting the status takes its search row with it.
    const [, gone] = d1(target, "DELETE FROM statuses; SELECT count(*) AS n FROM status_search");
    assert.equal(gone[0].n, 0);

    const again = node(["scripts/backup.mjs", "restore", file, "--local", "--persist-to", target]);
    assert.notEqual(again.code, 0);
    assert.match(again.out, /already has tables/);
  });
});
