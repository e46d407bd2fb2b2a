// Per-test storage for the integration tests: what a test writes to D1 and R2 is undone when it ends, so every test
// starts from the state the file's setup (migrations, beforeAll) left, as @cloudflare/vitest-pool-workers' isolated
// storage did up to 0.12. The pool for Vitest 4 isolates storage per file only (all tests of a file share it), and
// Tern's tests were written for a fresh state per test (counts, timelines, "the only row", the first account is the
// owner, ...).
//
// How: before each test, every table of D1 is copied into a shadow table in the same database (`CREATE TABLE … AS
// SELECT *`: no round trip of the rows, values kept as stored), and the R2 keys are listed; after it, one batch (one
// transaction, foreign keys checked at its end) drops the triggers (so putting rows back moves no counter), empties
// every table, copies the rows back, makes the triggers again and rebuilds the full-text indexes from their content
// tables; the R2 objects the test added are deleted. Left as
// they were: Durable Objects (a test's own are new objects under new ids; rate-limit counters of the file's earlier
// tests stay, as they would in production), and an object a test overwrote in R2.
import { env } from "cloudflare:test";

const SHADOW = "_tern_test_snapshot_";
let tables: string[] | undefined;
let triggers: { name: string; sql: string }[] = [];
let fullText: string[] = [];
let r2Keys: Set<string> | undefined;

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function schema(): Promise<string[]> {
  if (tables) return tables;
  const rows = await env.DB.prepare(
    `SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE '${SHADOW}%' AND name != 'd1_migrations' ORDER BY name`,
  ).all<{ name: string; type: string; sql: string }>();
  // Full-text indexes (FTS5 over a content table, kept by triggers) and their shadow tables are not copied: the
  // index is rebuilt from its content table once that is back.
  fullText = rows.results.filter((r) => r.type === "table" && /^CREATE VIRTUAL TABLE/i.test(r.sql)).map((r) => r.name);
  const derived = (name: string) => fullText.some((v) => name === v || name.startsWith(`${v}_`));
  tables = rows.results.filter((r) => r.type === "table" && !derived(r.name)).map((r) => r.name);
  triggers = rows.results.filter((r) => r.type === "trigger").map((r) => ({ name: r.name, sql: r.sql }));
  return tables;
}

async function r2List(): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await env.MEDIA.list({ cursor, limit: 1000 });
    for (const o of page.objects) keys.add(o.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

/** Takes the state to return to after the test. */
export async function saveTestStorage(): Promise<void> {
  const names = await schema();
  await env.DB.batch(
    names.flatMap((t) => [env.DB.prepare(`DROP TABLE IF EXISTS ${q(SHADOW + t)}`), env.DB.prepare(`CREATE TABLE ${q(SHADOW + t)} AS SELECT * FROM ${q(t)}`)]),
  );
  r2Keys = await r2List();
}

/** Puts D1 back as saveTestStorage found it and deletes the R2 objects added since. */
export async function restoreTestStorage(): Promise<void> {
  const names = await schema();
  await env.DB.batch([
    env.DB.prepare("PRAGMA defer_foreign_keys = ON"),
    ...triggers.map((t) => env.DB.prepare(`DROP TRIGGER IF EXISTS ${q(t.name)}`)),
    ...names.map((t) => env.DB.prepare(`DELETE FROM ${q(t)}`)),
    ...names.map((t) => env.DB.prepare(`INSERT INTO ${q(t)} SELECT * FROM ${q(SHADOW + t)}`)),
    ...triggers.map((t) => env.DB.prepare(t.sql)),
    ...fullText.map((v) => env.DB.prepare(`INSERT INTO ${q(v)} (${q(v)}) VALUES ('rebuild')`)),
  ]);
  if (r2Keys) {
    const added = [...(await r2List())].filter((k) => !r2Keys?.has(k));
    if (added.length) await env.MEDIA.delete(added);
  }
}
