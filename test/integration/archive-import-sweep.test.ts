// The hourly sweep of archive imports left behind: an upload in parts never completed goes after 7 days (its multipart
// upload aborted, its row deleted); a failed import never resumed loses its files after 30 days and can no longer be
// resumed (its row stays as its record); anything newer, running or finished is left alone. An R2 that fails leaves the
// row as it was, for the next run.
import { SELF, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDb } from "../../src/db/client";
import { sweepArchiveImports } from "../../src/services/data/import-archive-sweep";
import { ALICE, mastodonArchive } from "./archive-fixtures";
import { ORIGIN, makeUser, type TestUser } from "./helpers";
import { png } from "./media-fixtures";
import { queued } from "./queues";

afterEach(() => vi.restoreAllMocks());

const DAY = 24 * 60 * 60 * 1000;
const pad = (id: string) => id.padStart(20, "0");
const row = (id: string) =>
  env.DB.prepare("SELECT state, phase, file_key, error FROM archive_imports WHERE id = ?")
    .bind(pad(id))
    .first<{ state: string; phase: string; file_key: string; error: string | null }>();
const age = (id: string, days: number) =>
  env.DB.prepare("UPDATE archive_imports SET created_at = ? WHERE id = ?")
    .bind(Date.now() - days * DAY, pad(id))
    .run();

async function aliasedUser(): Promise<TestUser> {
  const me = await makeUser();
  await env.DB.prepare("INSERT INTO account_aliases (id, account_id, acct, uri, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(pad(String(Date.now())), pad(me.id), "alice@old.example", ALICE, Date.now())
    .run();
  return me;
}

/** An import uploaded whole, then failed (its rounds never run), `days` old. */
async function failedImport(me: TestUser, days: number): Promise<string> {
  const bytes = await mastodonArchive({ localUri: `${ORIGIN}/users/nobody/statuses/1`, localAuthor: `${ORIGIN}/users/nobody`, png: await png(4, 4) });
  const res = await SELF.fetch(`${ORIGIN}/api/tern/archive_imports`, {
    method: "POST",
    headers: { authorization: `Bearer ${me.token}`, "content-type": "application/zip", "content-length": String(bytes.length) },
    body: bytes,
  });
  expect(res.status).toBe(202);
  const id = ((await res.json()) as { id: string }).id;
  queued.jobs.length = 0;
  await env.DB.prepare("UPDATE archive_imports SET state = 'failed', error = 'D1 went away' WHERE id = ?").bind(pad(id)).run();
  await age(id, days);
  return id;
}

describe("archive imports left behind", () => {
  it("an upload never completed goes after 7 days; a newer one stays", async () => {
    const me = await aliasedUser();
    const old = (await me.api.post("/api/tern/archive_imports/uploads", { filename: "old.zip" })).body.id;
    const recent = (await me.api.post("/api/tern/archive_imports/uploads", { filename: "new.zip" })).body.id;
    await age(old, 8);
    await age(recent, 2);
    expect(await sweepArchiveImports(createDb(env.DB), env, Date.now())).toBe(1);
    expect(await row(old)).toBeNull();
    expect((await row(recent))!.state).toBe("uploading");
    expect((await me.api.delete(`/api/tern/archive_imports/uploads/${old}`)).status).toBe(404);
  });

  it("a failed import loses its files after 30 days and cannot be resumed; a newer one keeps them", async () => {
    const me = await aliasedUser();
    const old = await failedImport(me, 31);
    const recent = await failedImport(me, 10);
    const oldKey = (await row(old))!.file_key;
    const recentKey = (await row(recent))!.file_key;
    expect(await env.MEDIA.head(oldKey)).not.toBeNull();
    await sweepArchiveImports(createDb(env.DB), env, Date.now());
    expect(await env.MEDIA.head(oldKey)).toBeNull();
    expect(await row(old)).toMatchObject({ state: "failed", phase: "done" });
    expect((await row(old))!.error).toContain("D1 went away");
    expect((await me.api.post(`/api/tern/archive_imports/${old}/resume`)).status).toBe(422);
    expect(await env.MEDIA.head(recentKey)).not.toBeNull();
    expect((await me.api.post(`/api/tern/archive_imports/${recent}/resume`)).status).toBe(202);
  });

  it("an R2 that fails leaves the row resumable, for the next run", async () => {
    const me = await aliasedUser();
    const id = await failedImport(me, 40);
    const key = (await row(id))!.file_key;
    const media = { ...env.MEDIA, list: env.MEDIA.list.bind(env.MEDIA), delete: () => Promise.reject(new Error("R2 is down")) } as unknown as R2Bucket;
    await expect(sweepArchiveImports(createDb(env.DB), { MEDIA: media }, Date.now())).rejects.toThrow("R2 is down");
    expect(await row(id)).toMatchObject({ state: "failed" });
    expect((await row(id))!.phase).not.toBe("done");
    expect(await env.MEDIA.head(key)).not.toBeNull();
    await sweepArchiveImports(createDb(env.DB), env, Date.now());
    expect(await env.MEDIA.head(key)).toBeNull();
    expect((await row(id))!.phase).toBe("done");
  });
});
