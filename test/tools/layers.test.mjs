// The layering check (scripts/check-layers.mjs with the project's .dependency-cruiser.cjs) on a tiny fake src/ tree
// written to a temp directory: a clean tree passes; an upward import, a cycle, a module outside every layer, a sender
// imported by a service, a queue binding in a service and a service taking the whole Env each fail with the rule's
// name, the files and the fix; a violation listed in the baseline passes and is counted.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "tern-layers-test-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A small tree with one module per layer, every import pointing down. */
const CLEAN = {
  "src/index.ts": 'import { app } from "./app";\nexport default { fetch: app };\n',
  "src/app.ts":
    'import type { AppEnv } from "./context";\nimport { statusRoutes } from "./api/v1/statuses";\nimport { sendEffects } from "./effects/send";\nexport const app = (e: AppEnv) => [statusRoutes, sendEffects, e];\n',
  "src/context.ts": 'import type { Env } from "./env";\nexport type AppEnv = { Bindings: Env };\n',
  "src/api/v1/statuses.ts": 'import { postStatus } from "../../services/post-status";\nexport const statusRoutes = [postStatus];\n',
  "src/services/post-status.ts":
    'import type { Env } from "../env";\nimport { Effects } from "../effects/collector";\nimport { accountById } from "../queries/accounts";\nexport function postStatus(env: Pick<Env, "DB">, fx: Effects) {\n  fx.record("fanout");\n  return accountById(env);\n}\n',
  "src/queries/accounts.ts":
    'import { readable } from "../services/visibility";\nimport { db } from "../db/client";\nexport const accountById = (x: unknown) => [readable, db, x];\n',
  "src/services/visibility.ts": 'import { db } from "../db/client";\nexport const readable = db;\n',
  "src/effects/collector.ts": "export class Effects {\n  record(_kind: string) {}\n}\n",
  "src/effects/send.ts": 'import type { Env } from "../env";\nexport async function sendEffects(env: Env) {\n  await env.JOBS.send({});\n}\n',
  "src/env.ts": "export interface Env {\n  JOBS: Queue<unknown>;\n  DB: unknown;\n  MEDIA: unknown;\n}\n",
  "src/db/client.ts": 'import { id } from "../lib/ids";\nexport const db = id;\n',
  "src/lib/ids.ts": "export const id = 1;\n",
};

let n = 0;
/** Writes the clean tree with `changes` (path → text) and the project's config; `run(args)` runs the check on it. */
function tree(changes = {}) {
  const dir = join(tmp, `tree-${++n}`);
  const write = (files) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  };
  write({ ...CLEAN, ...changes });
  copyFileSync(join(root, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "ES2022", moduleResolution: "Bundler", strict: true }, include: ["src"] }),
  );
  const run = (args = []) =>
    promisify(execFile)(process.execPath, [join(root, "scripts", "check-layers.mjs"), "--root", dir, ...args], { maxBuffer: 1 << 24 }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }),
    );
  return { dir, write, run };
}

/** The check on the clean tree with `changes`. */
const check = (changes) => tree(changes).run();

describe("layers", { concurrency: true }, () => {
  test("a tree whose imports point down passes", async () => {
    const r = await check();
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /✔ imports point down, no new cycle/);
    assert.match(r.out, /known violations left to fix: 0/);
    assert.match(r.out, /✔ queue bindings touched only in src\/env\.ts, src\/effects\/send\.ts/);
    assert.match(r.out, /✔ services take only what they use from env/);
  });

  test("an upward import fails with the rule, the two files and the fix", async () => {
    const r = await check({ "src/entities/status.ts": 'import { postStatus } from "../services/post-status";\nexport const renderStatus = postStatus;\n' });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error layer-queries-and-entities: src\/entities\/status\.ts → src\/services\/post-status\.ts/);
    assert.match(r.out, /Fix: move the shared code down into src\/queries\/, src\/entities\/, policy .*, or invert the dependency/);
    assert.match(r.out, /✖ 1 new layering violation/);
  });

  test("a library module importing a route fails", async () => {
    const r = await check({ "src/lib/ids.ts": 'import { statusRoutes } from "../api/v1/statuses";\nexport const id = statusRoutes.length;\n' });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error layer-db-and-lib: src\/lib\/ids\.ts → src\/api\/v1\/statuses\.ts/);
  });

  test("a cycle fails, with its path", async () => {
    const r = await check({
      "src/lib/a.ts": 'import { b } from "./b";\nexport const a = () => b;\n',
      "src/lib/b.ts": 'import { a } from "./a";\nexport const b = () => a;\n',
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error no-circular: src\/lib\/a\.ts → src\/lib\/b\.ts → src\/lib\/a\.ts/);
    assert.match(r.out, /Fix: move the shared code down into a module both import, or invert the dependency/);
  });

  test("a module outside every layer fails", async () => {
    const r = await check({
      "src/misc/helper.ts": "export const helper = 1;\n",
      "src/lib/ids.ts": 'import { helper } from "../misc/helper";\nexport const id = helper;\n',
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error not-in-a-layer: src\/lib\/ids\.ts → src\/misc\/helper\.ts/);
  });

  test("a service importing the effects sender fails", async () => {
    const r = await check({
      "src/services/post-status.ts":
        'import type { Env } from "../env";\nimport { sendEffects } from "../effects/send";\nexport const postStatus = (env: Env) => sendEffects(env);\n',
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error queue-sender-effects-send: src\/services\/post-status\.ts → src\/effects\/send\.ts/);
    assert.match(r.out, /Fix: record the effect on the Effects collector/);
  });

  test("a service touching a queue binding fails with the file and line; comments and strings do not count", async () => {
    const r = await check({
      "src/services/post-status.ts":
        'import type { Env } from "../env";\n// env.JOBS in a comment is fine\nexport async function postStatus(env: Env) {\n  const note = "env.DELIVERY";\n  await env.JOBS.send({ note });\n}\n',
      "src/services/relay.ts": "export const relayQueue = (q: Queue<unknown>) => q;\n",
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error queue-binding: 2 use\(s\) of a queue binding outside/);
    assert.match(r.out, /src\/services\/post-status\.ts:5: await env\.JOBS\.send/);
    assert.match(r.out, /src\/services\/relay\.ts:1: export const relayQueue/);
    assert.doesNotMatch(r.out, /post-status\.ts:[24]:/);
    assert.match(r.out, /Fix: record the effect on the Effects collector/);
  });

  test("a service taking the whole Env, or a Pick of it naming a queue, fails with the file and line; Pick<Env, …> passes", async () => {
    const r = await check({
      "src/services/media.ts":
        'import type { Env } from "../env";\nexport const put = (env: Env) => env.MEDIA;\nexport const keep = (env: Pick<Env, "MEDIA" | "DB">) => env.MEDIA;\n',
      "src/services/relay.ts":
        'import type { Env } from "../env";\nexport type RelayEnv = Omit<Env, "DB">;\nexport interface Wide extends Env {\n  X: 1;\n}\nexport const q = (e: Pick<Env, "DB" | "JOBS">) => e.DB;\n',
      // Outside src/services/ the whole Env is allowed (the entry, the consumers, the senders).
      "src/lib/ids.ts": 'import type { Env } from "../env";\nexport const id = (env: Env) => env.DB;\n',
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /error service-env: 4 use\(s\) of the whole Env in src\/services\//);
    assert.match(r.out, /src\/services\/media\.ts:2: export const put = \(env: Env\)/);
    assert.doesNotMatch(r.out, /src\/services\/media\.ts:3:/);
    assert.match(r.out, /src\/services\/relay\.ts:2: export type RelayEnv = Omit<Env/);
    assert.match(r.out, /src\/services\/relay\.ts:3: export interface Wide extends Env/);
    assert.match(r.out, /src\/services\/relay\.ts:6: export const q = \(e: Pick<Env, "DB" \| "JOBS">\)/);
    assert.doesNotMatch(r.out, /src\/lib\/ids\.ts/);
    assert.match(r.out, /Fix: type the parameter/);
  });

  test("a violation in the baseline passes and is counted; a new one beside it still fails", async () => {
    const t = tree({ "src/entities/status.ts": 'import { postStatus } from "../services/post-status";\nexport const renderStatus = postStatus;\n' });
    const written = await t.run(["--baseline"]);
    assert.equal(written.code, 0, written.out);
    const known = await t.run();
    assert.equal(known.code, 0, known.out);
    assert.match(known.out, /known violations left to fix: 1 \(layer-queries-and-entities 1;/);
    t.write({ "src/entities/poll.ts": 'import { statusRoutes } from "../api/v1/statuses";\nexport const renderPoll = statusRoutes;\n' });
    const more = await t.run();
    assert.equal(more.code, 1, more.out);
    assert.match(more.out, /error layer-queries-and-entities: src\/entities\/poll\.ts → src\/api\/v1\/statuses\.ts/);
    assert.doesNotMatch(more.out, /error layer-queries-and-entities: src\/entities\/status\.ts/);
    assert.match(more.out, /known violations left to fix: 1/);
    // Writing the list again refuses to take the new one in; once it is fixed, the list shrinks.
    const refused = await t.run(["--baseline"]);
    assert.equal(refused.code, 1, refused.out);
    assert.match(
      refused.out,
      /kept as it was: these violations are new[\s\S]*layer-queries-and-entities: src\/entities\/poll\.ts → src\/api\/v1\/statuses\.ts/,
    );
    t.write({ "src/entities/poll.ts": "export const renderPoll = 1;\n", "src/entities/status.ts": "export const renderStatus = 1;\n" });
    const stale = await t.run();
    assert.equal(stale.code, 0, stale.out);
    assert.match(stale.out, /known violations left to fix: 0\n/);
    assert.match(stale.out, /1 of the 1 in \.dependency-cruiser-known-violations\.json no longer occur/);
    const shrunk = await t.run(["--baseline"]);
    assert.equal(shrunk.code, 0, shrunk.out);
    assert.match(shrunk.out, /0 known violations \(1 before\)/);
  });
});
