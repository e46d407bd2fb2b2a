// An archive import when its dependencies fail mid-way: D1 refusing a round's batch (once, or until the attempts run
// out), R2 failing while a media file is copied, the queue refusing the next round's message, and one round's message
// delivered twice. Each time the import ends with every item imported exactly once, the failing rounds are bounded
// (ARCHIVE_MAX_ATTEMPTS in a row, then `failed`, resumable by its owner), and no item or media file is duplicated.
import { SELF, env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { d1Observer } from "../../src/db/client";
import { resendPending } from "../../src/effects/pending";
import { createDb } from "../../src/db/client";
import { Effects } from "../../src/effects/collector";
import { ARCHIVE_MAX_ATTEMPTS, runArchiveImportRound } from "../../src/services/data/import-archive-rounds";
import { fetchMock } from "../support/fetch-mock";
import { ALICE, mastodonArchive, outboxItems, outboxJson } from "./archive-fixtures";
import { ORIGIN, cfg, makeUser, type TestUser } from "./helpers";
import { png } from "./media-fixtures";
import { queued, runQueuedJobs, unpack } from "./queues";

beforeAll(() => {
  fetchMock.activate();
  fetchMock.disableNetConnect();
});
afterEach(() => {
  d1Observer.wrap = null;
  vi.restoreAllMocks();
});

const pad = (id: string) => id.padStart(20, "0");
const count = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

async function setup() {
  const bob = await makeUser();
  const post = await bob.api.post("/api/v1/statuses", { status: "bob's post" });
  await runQueuedJobs();
  const me = await makeUser();
  await env.DB.prepare("INSERT INTO account_aliases (id, account_id, acct, uri, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(pad(String(Date.now())), pad(me.id), "alice@old.example", ALICE, Date.now())
    .run();
  const archive = await mastodonArchive({ localUri: post.body.uri, localAuthor: `${ORIGIN}/users/${bob.username}`, png: await png(8, 8) });
  return { me, archive };
}

async function upload(u: TestUser, bytes: Uint8Array) {
  const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports`, {
    method: "POST",
    headers: { authorization: `Bearer ${u.token}`, "content-type": "application/zip", "content-length": String(bytes.length) },
    body: bytes,
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

const state = async (u: TestUser, id: string) => (await u.api.get(`/api/tern/archive_imports/${id}`)).body;

/** What a clean import of the fixture leaves: 9 statuses (8 + a boost), 1 media file, 1 favourite, 1 bookmark. */
async function importedOnce(me: TestUser) {
  expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", pad(me.id))).toBe(9);
  expect(await count("SELECT count(*) AS n FROM archive_import_items WHERE account_id = ?", pad(me.id))).toBe(9);
  expect(await count("SELECT count(*) AS n FROM media_attachments WHERE account_id = ?", pad(me.id))).toBe(1);
  expect(await count("SELECT count(*) AS n FROM favourites WHERE account_id = ?", pad(me.id))).toBe(1);
  expect(await count("SELECT count(*) AS n FROM bookmarks WHERE account_id = ?", pad(me.id))).toBe(1);
  // every media object in R2 is one a row names (a failed round's copies were deleted again)
  const objects = (await env.MEDIA.list({ prefix: "media_attachments/" })).objects.map((o) => o.key);
  const keys = (await env.DB.prepare("SELECT file_key FROM media_attachments").all<{ file_key: string }>()).results.map((r) => r.file_key);
  expect(objects.sort()).toEqual(keys.sort());
}

/** D1 refuses the batches whose first statement is a round's progress, while `failing()` says so. */
function failRoundBatches(failing: () => boolean) {
  let refused = 0;
  d1Observer.wrap = (d1) =>
    new Proxy(d1, {
      get(target, prop) {
        if (prop === "batch")
          return async (stmts: D1PreparedStatement[]) => {
            // workerd's prepared statement keeps its SQL text in `statement`
            const first = (stmts[0] as unknown as { statement?: string } | undefined)?.statement ?? "";
            if (/UPDATE archive_imports SET phase/.test(first) && failing()) {
              refused++;
              throw new Error("D1_ERROR: Network connection lost.");
            }
            return (target as D1Database).batch(stmts);
          };
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as D1Database;
  return () => refused;
}

describe("an archive import when a dependency fails", () => {
  it("D1 refuses two rounds: each writes nothing, retries itself later, and the import ends with everything once", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    let left = 2;
    const refused = failRoundBatches(() => left-- > 0);
    await runQueuedJobs();
    expect(refused()).toBe(2);
    expect(await state(me, id)).toMatchObject({ state: "finished", failed_items: 0, error: null });
    await importedOnce(me);
  });

  it(`D1 down for good: ${ARCHIVE_MAX_ATTEMPTS} rounds in a row, then failed with the reason; resumed, it finishes without duplicates`, async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    // let the split and two rounds through, then refuse everything
    let allowed = 3;
    const refused = failRoundBatches(() => allowed-- <= 0);
    const runs = await runQueuedJobs();
    expect(refused()).toBe(ARCHIVE_MAX_ATTEMPTS);
    expect(runs).toBe(3 + ARCHIVE_MAX_ATTEMPTS);
    const failed = await state(me, id);
    expect(failed).toMatchObject({ state: "failed" });
    expect(failed.error).toMatch(/Network connection lost/);
    expect(queued.jobs).toHaveLength(0);

    d1Observer.wrap = null;
    const resumed = await me.api.post(`/api/tern/archive_imports/${id}/resume`);
    expect(resumed.status).toBe(202);
    await runQueuedJobs();
    expect(await state(me, id)).toMatchObject({ state: "finished", processed_items: 13 });
    await importedOnce(me);
    // a finished import cannot be resumed
    expect((await me.api.post(`/api/tern/archive_imports/${id}/resume`)).status).toBe(422);
  });

  it("R2 fails while a media file is copied: the round is retried and the file stored once", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    const put = env.MEDIA.put.bind(env.MEDIA);
    let left = 1;
    vi.spyOn(env.MEDIA, "put").mockImplementation(async (key: string, ...rest: unknown[]) => {
      if (key.startsWith("media_attachments/") && left-- > 0) throw new Error("R2 put failed: We encountered an internal error.");
      return (put as (k: string, ...r: unknown[]) => Promise<R2Object>)(key, ...rest);
    });
    await runQueuedJobs();
    expect(left).toBeLessThan(0);
    expect(await state(me, id)).toMatchObject({ state: "finished", failed_items: 0 });
    await importedOnce(me);
  });

  it("the queue refuses the next round: the message waits in pending_effects, the cron sends it, the import finishes", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    // the first round (the split) runs; its next round's message is refused by the queue
    vi.mocked(env.JOBS.send).mockRejectedValueOnce(new Error("Queue send failed"));
    await runQueuedJobs();
    expect(await state(me, id)).toMatchObject({ state: "in_progress", phase: "statuses" });
    expect(await count("SELECT count(*) AS n FROM pending_effects")).toBe(1);
    expect(await resendPending(env)).toBe(1);
    await runQueuedJobs();
    expect(await state(me, id)).toMatchObject({ state: "finished" });
    await importedOnce(me);
  });

  it("a round's message delivered twice imports nothing twice", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    await runQueuedJobs(1); // the split
    const next = queued.jobs.flatMap(unpack).find((e) => e.type === "import_archive");
    expect(next).toBeDefined();
    queued.jobs.push(...queued.jobs.slice()); // the same message again
    await runQueuedJobs();
    expect(await state(me, id)).toMatchObject({ state: "finished", processed_items: 13 });
    await importedOnce(me);
  });

  it("past the day's D1 row budget, the next round waits for the next UTC day", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    queued.jobs.length = 0;
    const db = createDb(env.DB);
    const day = Date.UTC(2026, 10, 28, 22, 0, 0);
    // the split writes no statuses; then rounds run until the budget (60 rows) is spent
    let rounds = 0;
    for (;;) {
      const fx = new Effects(ORIGIN);
      await runArchiveImportRound(db, env, fx, cfg(), id, 60, day);
      rounds++;
      const later = fx.drainLater();
      if (later.length) {
        // two hours to midnight, and a minute more
        expect(later[0]!.seconds).toBe(2 * 3600 + 60);
        expect(fx.drain()).toEqual([]);
        break;
      }
      expect(fx.drain().map((e) => e.type)).toEqual(["import_archive"]);
      expect(rounds).toBeLessThan(10);
    }
    const row = await state(me, id);
    expect(row.state).toBe("in_progress");
    expect(row.rows_written).toBeGreaterThanOrEqual(60);
    // the next day it goes on, to its end (what is left writes fewer than 60 rows)
    for (let i = 0; i < 10 && (await state(me, id)).state === "in_progress"; i++) {
      const fx = new Effects(ORIGIN);
      await runArchiveImportRound(db, env, fx, cfg(), id, 60, day + 3 * 3600_000);
      expect(fx.drainLater()).toEqual([]);
    }
    expect(await state(me, id)).toMatchObject({ state: "finished", processed_items: 13 });
  });
});

describe("the split of the collection files, in bounded rounds", () => {
  /** Runs the import's rounds with the split bounded to `chars` bytes a round; returns each split round's bytes read. */
  async function runBounded(id: string, chars: number, beforeRound: (round: number) => void | Promise<void> = () => {}) {
    const db = createDb(env.DB);
    const e = { ...env, ARCHIVE_SPLIT_BYTES: String(chars) };
    const steps: number[] = [];
    let prev = { s: 0, bytes: 0 };
    for (let round = 0; round < 500; round++) {
      const before = await env.DB.prepare("SELECT phase, cursor, state FROM archive_imports WHERE id = ?")
        .bind(pad(id))
        .first<{ phase: string; cursor: string | null; state: string }>();
      if (before!.state !== "in_progress") break;
      await beforeRound(round);
      await runArchiveImportRound(db, e, new Effects(ORIGIN), cfg(), id);
      const after = await env.DB.prepare("SELECT phase, cursor FROM archive_imports WHERE id = ?")
        .bind(pad(id))
        .first<{ phase: string; cursor: string | null }>();
      if (after!.phase === "split" && after!.cursor && after!.cursor !== before!.cursor) {
        const c = JSON.parse(after!.cursor) as { s: number; bytes: number };
        steps.push(c.s === prev.s ? c.bytes - prev.bytes : c.bytes);
        prev = c;
      }
    }
    return steps;
  }

  it("a round splits at most its bound (plus one slice), carries where it stopped, and the import is the same", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    queued.jobs.length = 0;
    const checkpoints: string[] = [];
    const put = env.MEDIA.put.bind(env.MEDIA);
    vi.spyOn(env.MEDIA, "put").mockImplementation(async (key: string, ...rest: unknown[]) => {
      if (key.includes("/inflate/") || key.includes("/plain/")) checkpoints.push(key);
      return (put as (...a: unknown[]) => Promise<R2Object>)(key, ...rest);
    });
    // reads of the upload, by round: a round going on in a file reads its data only, not the zip's directory again
    let round = 0;
    const uploadReads: number[] = [];
    const get = env.MEDIA.get.bind(env.MEDIA);
    vi.spyOn(env.MEDIA, "get").mockImplementation(async (key: string, ...rest: unknown[]) => {
      if (key.endsWith(`${id}/upload`)) uploadReads[round] = (uploadReads[round] ?? 0) + 1;
      return (get as (...a: unknown[]) => Promise<R2ObjectBody | null>)(key, ...rest);
    });
    const steps = await runBounded(id, 1000, (r) => {
      round = r;
    });
    // the fixture's deflated outbox.json is several KB, one deflate block: inflated and split over several rounds, each
    // stopping inside the block within 1,000 bytes plus one copy (258 bytes at most), never inflated whole
    expect(steps.length).toBeGreaterThan(3);
    expect(uploadReads[0]).toBeGreaterThanOrEqual(3); // the directory's tail, the directory, the local header, the data
    for (let r = 1; r < steps.length; r++) expect(uploadReads[r], `round ${r}`).toBe(1);
    for (const s of steps) expect(s).toBeLessThanOrEqual(1000 + 258);
    expect(checkpoints.length).toBeGreaterThanOrEqual(steps.length);
    expect(checkpoints.every((k) => k.includes("/inflate/outbox-"))).toBe(true);
    expect(await state(me, id)).toMatchObject({ state: "finished", processed_items: 13, failed_items: 0 });
    await importedOnce(me);
    // the checkpoints' windows are gone with the import
    expect((await env.MEDIA.list({ prefix: `archive_imports/${id}/` })).objects).toEqual([]);
  });

  it("a checkpoint's window lost from R2 between rounds: the file is split again from its start, and the import is the same", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    queued.jobs.length = 0;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    let lost = 0;
    const steps = await runBounded(id, 1000, async (round) => {
      if (round !== 3) return;
      const windows = (await env.MEDIA.list({ prefix: `archive_imports/${id}/inflate/` })).objects.map((o) => o.key);
      lost = windows.length;
      await env.MEDIA.delete(windows);
    });
    expect(lost).toBeGreaterThan(0);
    expect(warn.mock.calls.some(([m]) => String(m).includes("splitting it again from its start"))).toBe(true);
    // Not retried into a failure: read again from the start, once, in more rounds than without the loss.
    expect(steps.length).toBeGreaterThan(4);
    expect(await state(me, id)).toMatchObject({ state: "finished", total_items: 13, processed_items: 13, failed_items: 0 });
    await importedOnce(me);
    expect((await env.MEDIA.list({ prefix: `archive_imports/${id}/` })).objects).toEqual([]);
  });

  it("D1 refusing a split round's batch in the middle: the round is redone from the same point, nothing is split twice", async () => {
    const { me, archive } = await setup();
    const id = await upload(me, archive);
    queued.jobs.length = 0;
    let refuse = false;
    let left = 1;
    const refused = failRoundBatches(() => refuse && left-- > 0);
    await runBounded(id, 1000, (round) => {
      refuse = round === 2;
    });
    expect(refused()).toBe(1);
    expect(await state(me, id)).toMatchObject({ state: "finished", processed_items: 13, failed_items: 0 });
    await importedOnce(me);
  });
  it("an outbox.json alone, its characters of 2 to 4 bytes cut by every slice: each round resumes by range, every text intact", async () => {
    const me = await makeUser();
    await env.DB.prepare("INSERT INTO account_aliases (id, account_id, acct, uri, created_at) VALUES (?, ?, ?, ?, ?)")
      .bind(pad(String(Date.now())), pad(me.id), "alice@old.example", ALICE, Date.now())
      .run();
    const items = outboxItems({ localUri: "https://gone.example/x", localAuthor: "https://gone.example/u", png: new Uint8Array(), extraPosts: 40 });
    const many = "🐦✓ü".repeat(30);
    const text = outboxJson(items).replaceAll("Post number", `Pöst ${many} nümber`);
    const bytes = new TextEncoder().encode(text);
    const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports?filename=outbox.json`, {
      method: "POST",
      headers: { authorization: `Bearer ${me.token}`, "content-type": "application/zip", "content-length": String(bytes.length) },
      body: bytes,
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { id: string }).id;
    queued.jobs.length = 0;
    const steps = await runBounded(id, 700);
    expect(steps.length).toBeGreaterThan(bytes.length / 1100);
    for (const s of steps) expect(s).toBeLessThanOrEqual(1024);
    expect(await state(me, id)).toMatchObject({ state: "finished", total_items: 50, imported_items: 48, skipped_items: 2, failed_items: 0 });
    const texts = (await env.DB.prepare("SELECT text FROM statuses WHERE account_id = ? AND text LIKE '%nümber%'").bind(pad(me.id)).all<{ text: string }>())
      .results;
    expect(texts).toHaveLength(40);
    for (const t of texts) expect(t.text).toMatch(new RegExp(`^Pöst ${many} nümber \\d+ #bench$`, "u"));
  });
});
