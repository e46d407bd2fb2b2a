// Remote avatars and headers cached in R2 (issue 32 point 3, src/services/remote-media/pictures.ts): a remote account
// stored with pictures is due; the cron queues a bounded batch, the job fetches each through the guarded fetch and the
// avatar checks, and the API then answers Tern's URL, served by the media route. A changed picture is fetched again
// and the old copy goes; reject_media is never fetched; a failing file server keeps the remote URL with bounded
// attempts; the prune drops copies of accounts nobody here follows, which come back on a view of their old URL.
import { env, SELF } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Effects } from "../../src/effects/collector";
import { MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import { pruneRemotePictures, queueDuePictures } from "../../src/services/remote-media/pictures";
import { normalizeActor } from "../../src/federation/remote/normalize";
import { upsertRemoteAccount } from "../../src/federation/remote/remote-accounts";
import { ADMIN } from "./admin-fixtures";
import { create, installFetchMock, note, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { anon, db, makeUser, ORIGIN } from "./helpers";
import { png } from "./media-fixtures";
import { queued } from "./queues";
import { fileServer } from "./file-server";

let PNG: Uint8Array;
beforeAll(async () => {
  installFetchMock();
  PNG = await png(40, 40);
});
afterEach(() => vi.restoreAllMocks());

const ON = { ...env, REMOTE_MEDIA_CACHE: "true", REMOTE_MEDIA_TIMEOUT_MS: "200" } as typeof env;

const picture = () => new Response(PNG, { headers: { "content-type": "image/png" } });

let n = 0;
/** A remote account stored here (by delivering one of its posts), with these pictures; returns its id and actor. */
async function accountWith(pictures: { icon?: string; image?: string }, host = "pics.example") {
  const docPatch: Record<string, unknown> = {};
  if (pictures.icon) docPatch.icon = { type: "Image", mediaType: "image/jpeg", url: `https://files.example${pictures.icon}` };
  if (pictures.image) docPatch.image = { type: "Image", mediaType: "image/jpeg", url: `https://files.example${pictures.image}` };
  const actor = await remoteActor(`p${++n}`, host, { docPatch });
  expect((await postInbox(actor, create(actor, note(actor)))).status).toBe(202);
  await runJobs(ON);
  const [row] = await sql("SELECT ltrim(id, '0') AS id FROM accounts WHERE uri = ?", actor.uri);
  return { id: row!.id as string, actor };
}

/** The five-minute cron's step, then the job it queued. */
async function cachePictures(at = Date.now()) {
  const fx = new Effects(ORIGIN);
  const queuedNow = await queueDuePictures(db(), fx, at);
  queued.jobs.push(...fx.drain());
  await runJobs(ON);
  return queuedNow;
}

const accountJson = async (id: string) => (await anon.get(`/api/v1/accounts/${id}`)).body;

describe("remote avatars and headers cached in R2", () => {
  it("are fetched once, answered and served from Tern's domain; the cron takes each account once", async () => {
    const asked = fileServer(() => picture());
    const { id } = await accountWith({ icon: "/a/avatar.jpg", image: "/a/header.jpg" });
    // Until the cron ran, the remote URLs.
    expect((await accountJson(id)).avatar).toBe("https://files.example/a/avatar.jpg");
    expect(await cachePictures()).toBeGreaterThanOrEqual(1);
    expect(asked.sort()).toEqual(["/a/avatar.jpg", "/a/header.jpg"]);
    const a = await accountJson(id);
    expect(a.avatar.startsWith(`${ORIGIN}/media/remote_accounts/${id}/`)).toBe(true);
    expect(a.avatar_static).toBe(a.avatar);
    expect(a.header.startsWith(`${ORIGIN}/media/remote_accounts/${id}/`)).toBe(true);
    const file = await SELF.fetch(a.avatar);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG);
    // Nothing due any more: the next run fetches nothing.
    expect(await cachePictures()).toBe(0);
    expect(asked).toHaveLength(2);
  });

  it("a changed avatar is fetched again and its old copy goes; the header's copy stays", async () => {
    const asked = fileServer(() => picture());
    const { id, actor } = await accountWith({ icon: "/b/one.jpg", image: "/b/header.jpg" });
    await cachePictures();
    const before = await accountJson(id);
    // The actor's document now names a new avatar (as its Update's refetch stores it).
    const doc = { ...actor.doc, icon: { type: "Image", url: "https://files.example/b/two.jpg" } };
    await upsertRemoteAccount(db(), normalizeActor(doc)!);
    expect((await accountJson(id)).avatar).toBe("https://files.example/b/two.jpg");
    await cachePictures();
    const after = await accountJson(id);
    expect(after.avatar).not.toBe(before.avatar);
    expect(after.avatar.startsWith(`${ORIGIN}/media/remote_accounts/${id}/`)).toBe(true);
    expect(after.header).toBe(before.header);
    expect(asked.filter((p) => p.endsWith(".jpg")).sort()).toEqual(["/b/header.jpg", "/b/one.jpg", "/b/two.jpg"]);
    const keys = (await env.MEDIA.list({ prefix: `remote_accounts/${id}/` })).objects.map((o) => o.key);
    expect(keys).toHaveLength(2);
    // The old URL leads to the new copy.
    const old = await SELF.fetch(before.avatar, { redirect: "manual" });
    expect(old.status).toBe(302);
    expect(old.headers.get("location")).toBe(new URL(after.avatar).pathname);
  });

  it("an account of a domain that rejects media is never fetched", async () => {
    const asked = fileServer(() => picture());
    const admin = await makeUser("picsadmin", ADMIN);
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: "nomedia.example", severity: "noop", reject_media: true })).status).toBe(200);
    await accountWith({ icon: "/c/avatar.jpg" }, "nomedia.example");
    await cachePictures();
    expect(asked).toEqual([]);
  });

  for (const [what, answer] of [
    ["throws (DNS failure)", () => Promise.reject(new TypeError("fetch failed: getaddrinfo ENOTFOUND"))],
    ["answers 503", () => new Response("busy", { status: 503 })],
    ["hangs", () => new Promise<Response>(() => {})],
  ] as const) {
    it(`a file server that ${what}: the remote URL stays, attempts are bounded, other accounts are cached`, async () => {
      const asked = fileServer((path) => (path.startsWith("/bad/") ? answer() : picture()));
      const bad = await accountWith({ icon: "/bad/avatar.jpg" });
      const good = await accountWith({ icon: "/good/avatar.jpg" });
      await cachePictures();
      // The runner retries the failed effect, each time after a backoff: run what it re-sent until nothing is left.
      for (let i = 0; i < MAX_EFFECT_ATTEMPTS + 2 && queued.jobs.length; i++) await runJobs(ON);
      expect((await accountJson(bad.id)).avatar).toBe("https://files.example/bad/avatar.jpg");
      expect((await accountJson(good.id)).avatar.startsWith(`${ORIGIN}/media/`)).toBe(true);
      const tries = asked.filter((p) => p === "/bad/avatar.jpg").length;
      expect(tries).toBeGreaterThanOrEqual(1);
      expect(tries).toBeLessThanOrEqual(MAX_EFFECT_ATTEMPTS);
      expect((await env.MEDIA.list({ prefix: `remote_accounts/${bad.id}/` })).objects).toEqual([]);
    });
  }

  it("a file that is not a picture, or too large, keeps the remote URL and stores nothing", async () => {
    fileServer((path) =>
      path.startsWith("/html/") ? new Response("<html></html>", { headers: { "content-type": "image/jpeg" } }) : new Response(new Uint8Array(9 * 1024 * 1024)),
    );
    const html = await accountWith({ icon: "/html/avatar.jpg" });
    const huge = await accountWith({ icon: "/huge/avatar.jpg" });
    await cachePictures();
    for (const a of [html, huge]) {
      expect((await accountJson(a.id)).avatar).toMatch(/^https:\/\/files\.example\//);
      expect((await env.MEDIA.list({ prefix: `remote_accounts/${a.id}/` })).objects).toEqual([]);
    }
  });

  it("the prune drops copies of accounts nobody here follows after the retention; a followed account keeps its own; a pruned one comes back on a view", async () => {
    fileServer(() => picture());
    const lone = await accountWith({ icon: "/d/lone.jpg" });
    const followed = await accountWith({ icon: "/d/followed.jpg" });
    const me = await makeUser();
    await sql(
      "INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, 0)",
      "00000000000000009999",
      me.id.padStart(20, "0"),
      followed.id.padStart(20, "0"),
    );
    await cachePictures();
    const cachedUrl = (await accountJson(lone.id)).avatar;
    expect(cachedUrl.startsWith(`${ORIGIN}/media/`)).toBe(true);
    const later = Date.now() + 8 * 86_400_000;
    expect(await pruneRemotePictures(db(), ON, new Effects(ORIGIN), later)).toBe(1);
    expect((await accountJson(lone.id)).avatar).toBe("https://files.example/d/lone.jpg");
    expect((await accountJson(followed.id)).avatar.startsWith(`${ORIGIN}/media/`)).toBe(true);
    expect((await env.MEDIA.list({ prefix: `remote_accounts/${lone.id}/` })).objects).toEqual([]);
    // Not due again by itself...
    expect(await cachePictures(later)).toBe(0);
    // ...but a client that kept the old URL is sent to the remote file, and the fetch is queued again.
    const old = await SELF.fetch(cachedUrl, { redirect: "manual" });
    expect(old.status).toBe(302);
    expect(old.headers.get("location")).toBe("https://files.example/d/lone.jpg");
    await runJobs(ON);
    expect((await accountJson(lone.id)).avatar.startsWith(`${ORIGIN}/media/remote_accounts/${lone.id}/`)).toBe(true);
  });
});
