// Remote attachments cached in R2 (issue 32 point 3): a remote status stored with media records `cache_media`; the
// job fetches each file through the guarded fetch and the upload pipeline, and the API then serves Tern's copy
// (preview, sizes, blurhash) while remote_url keeps the original. Each way the file server can fail (throws, hangs,
// 5xx, 404, bytes of another type, more than the cap) is driven: attempts stay bounded, nothing is half-stored,
// and the status keeps answering the remote URL. The files are served by a spy on fetch for files.example (the
// actors by fetchMock), the jobs run by the consumer's own code (runJobs).
import { env, SELF } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import { anon, db, makeUser, ORIGIN } from "./helpers";
import { Effects } from "../../src/effects/collector";
import { pruneRemoteMedia } from "../../src/services/remote-media/prune";
import { ADMIN } from "./admin-fixtures";
import { create, installFetchMock, note, pad, postInbox, remoteActor, runJobs, sql } from "./federation-inbox-fixtures";
import { jpeg, mp4 } from "./media-fixtures";
import { photo } from "./media-pipeline-fixtures";
import { fileServer } from "./file-server";

beforeAll(() => installFetchMock());
afterEach(() => vi.restoreAllMocks());

const ON = { ...env, REMOTE_MEDIA_CACHE: "true", REMOTE_MEDIA_PREVIEWS: "true", REMOTE_MEDIA_TIMEOUT_MS: "200" } as typeof env;

type Answer = (path: string) => Response | Promise<Response>;

const bytes = (b: Uint8Array, type: string) => new Response(b, { headers: { "content-type": type, "content-length": String(b.length) } });

let n = 0;
/** Delivers a status by a new actor of `host` with these attachments; returns the status as the API shows it. */
async function statusWith(attachment: Record<string, unknown>[], host = "remote.example") {
  const actor = await remoteActor(`m${++n}`, host);
  const doc = note(actor, { attachment });
  expect((await postInbox(actor, create(actor, doc))).status).toBe(202);
  const jobs = await runJobs(ON);
  const [row] = await sql("SELECT ltrim(id, '0') AS id FROM statuses WHERE uri = ?", doc.id);
  return { id: row!.id as string, jobs };
}

const show = async (id: string) => (await anon.get(`/api/v1/statuses/${id}`)).body;
const r2Keys = async (id: string) => (await env.MEDIA.list({ prefix: `media_attachments/${id}/` })).objects.map((o) => o.key);
const deadLetters = async () => (await sql("SELECT body FROM dead_letters WHERE queue = 'tern-jobs'")).filter((r) => String(r.body).includes("cache_media"));

const image = (path: string, extra: Record<string, unknown> = {}) => ({
  type: "Document",
  mediaType: "image/png",
  url: `https://files.example${path}`,
  ...extra,
});

describe("remote attachments cached in R2", () => {
  it("by default a picture is stored as sent: measured from its header, its own preview, the sender's blurhash, no Images transformation", async () => {
    const big = await photo(1200, 900);
    fileServer(() => bytes(big, "image/png"));
    const transforms = vi.spyOn(env.IMAGES!, "input");
    const info = vi.spyOn(env.IMAGES!, "info");
    const actor = await remoteActor(`m${++n}`, "remote.example");
    const doc = note(actor, { attachment: [image("/plain.png", { blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj" })] });
    expect((await postInbox(actor, create(actor, doc))).status).toBe(202);
    await runJobs({ ...ON, REMOTE_MEDIA_PREVIEWS: undefined } as unknown as typeof env);
    const [row] = await sql("SELECT ltrim(id, '0') AS id FROM statuses WHERE uri = ?", doc.id);
    const [m] = (await show(row!.id as string)).media_attachments;
    expect(m.url.startsWith(`${ORIGIN}/media/media_attachments/${m.id}/`)).toBe(true);
    expect(m.preview_url).toBe(m.url);
    expect(m.meta.original).toMatchObject({ width: 1200, height: 900 });
    expect(m.blurhash).toBe("LEHV6nWB2yk8pyo0adR*.7kCMdnj");
    expect(transforms).not.toHaveBeenCalled();
    expect(info).not.toHaveBeenCalled();
    const file = await SELF.fetch(m.url);
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(big);
  });

  it("by default a picture whose sender gave no blurhash gets one, at one Images transformation, still with no preview", async () => {
    const big = await photo(1200, 900);
    fileServer(() => bytes(big, "image/png"));
    const transforms = vi.spyOn(env.IMAGES!, "input");
    const actor = await remoteActor(`m${++n}`, "remote.example");
    const doc = note(actor, { attachment: [image("/nohash.png")] });
    expect((await postInbox(actor, create(actor, doc))).status).toBe(202);
    await runJobs({ ...ON, REMOTE_MEDIA_PREVIEWS: undefined } as unknown as typeof env);
    const [row] = await sql("SELECT ltrim(id, '0') AS id FROM statuses WHERE uri = ?", doc.id);
    const [m] = (await show(row!.id as string)).media_attachments;
    expect(m.url.startsWith(`${ORIGIN}/media/`)).toBe(true);
    expect(m.preview_url).toBe(m.url);
    expect(typeof m.blurhash).toBe("string");
    expect(m.blurhash.length).toBeGreaterThan(5);
    expect(transforms).toHaveBeenCalledTimes(1);
  });

  it("a picture is fetched once, served from Tern's domain with a preview, sizes and blurhash; remote_url keeps the original", async () => {
    const big = await photo(1200, 900);
    const asked = fileServer(() => bytes(big, "image/png"));
    const { id } = await statusWith([image("/a/big.png", { width: 1200, height: 900, name: "a field" })]);
    expect(asked).toEqual(["/a/big.png"]);
    const [m] = (await show(id)).media_attachments;
    expect(m.remote_url).toBe("https://files.example/a/big.png");
    expect(m.url.startsWith(`${ORIGIN}/media/media_attachments/${m.id}/`)).toBe(true);
    expect(m.preview_url).toMatch(/\/small\.webp$/);
    expect(m.meta.original).toMatchObject({ width: 1200, height: 900 });
    expect(m.meta.small.width * m.meta.small.height).toBeLessThanOrEqual(480 * 480);
    expect(typeof m.blurhash).toBe("string");
    expect(m.description).toBe("a field");
    // Served by the media route, immutable for a year.
    const file = await SELF.fetch(m.url);
    expect(file.status).toBe(200);
    expect(file.headers.get("cache-control")).toContain("max-age=31536000");
    expect(new URL(m.preview_url).pathname.startsWith("/media/")).toBe(true);
  });

  it("GoToSocial's attachment (no width or height) gets its meta measured from the file (issue 30 point 6)", async () => {
    const pic = await photo(640, 400);
    fileServer(() => bytes(pic, "image/png"));
    // As GoToSocial 0.19 sends an attachment: Document, mediaType, url, name, blurhash; no width, height or focalPoint.
    const gts = {
      type: "Document",
      mediaType: "image/png",
      url: "https://files.example/fileserver/01H/attachment/original/01J.png",
      name: "GoToSocial picture",
      blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
    };
    const { id } = await statusWith([gts], "gts.example");
    const [m] = (await show(id)).media_attachments;
    expect(m.meta.original).toEqual({ width: 640, height: 400, size: "640x400", aspect: 1.6 });
    expect(m.meta.small).toBeTruthy();
    // The sender's blurhash is kept.
    expect(m.blurhash).toBe(gts.blurhash);
    expect(m.remote_url).toBe(gts.url);
  });

  it("a video is streamed into R2 and described from its headers", async () => {
    const video = mp4(640, 360, 3, { mdatBytes: 300_000 });
    fileServer(() => bytes(video, "video/mp4"));
    const { id } = await statusWith([{ type: "Document", mediaType: "video/mp4", url: "https://files.example/v.mp4" }]);
    const [m] = (await show(id)).media_attachments;
    expect(m.type).toBe("video");
    expect(m.url).toMatch(/\/media\/media_attachments\/.*\/original\.mp4$/);
    expect(m.meta.original).toMatchObject({ width: 640, height: 360 });
    const keys = await r2Keys(m.id);
    expect(keys).toHaveLength(1);
    expect((await env.MEDIA.head(keys[0]!))?.size).toBe(video.length);
  });

  it("a domain blocked with reject_media is never fetched", async () => {
    const admin = await makeUser("mediacache", ADMIN);
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: "nomedia.example", severity: "noop", reject_media: true })).status).toBe(200);
    const asked = fileServer(() => bytes(jpeg(10, 10), "image/jpeg"));
    const { id, jobs } = await statusWith([image("/r.png")], "nomedia.example");
    expect(asked).toEqual([]);
    expect(JSON.stringify(jobs)).not.toContain("cache_media");
    const [m] = (await show(id)).media_attachments;
    expect(m.url).toBeNull();
    expect(m.remote_url).toBe("https://files.example/r.png");
  });

  it("a copy cached before its domain was blocked with reject_media is no longer shown", async () => {
    const pic = await photo(300, 200);
    fileServer(() => bytes(pic, "image/png"));
    const { id } = await statusWith([image("/later-blocked.png")], "blockedlater.example");
    expect((await show(id)).media_attachments[0].url.startsWith(ORIGIN)).toBe(true);
    const admin = await makeUser("mediacache2", ADMIN);
    expect((await admin.api.post("/api/v1/admin/domain_blocks", { domain: "blockedlater.example", severity: "noop", reject_media: true })).status).toBe(200);
    await runJobs(ON);
    const [m] = (await show(id)).media_attachments;
    expect(m.type).toBe("unknown");
    expect(m.url).toBeNull();
    expect(m.remote_url).toBe("https://files.example/later-blocked.png");
  });

  const transient: [string, Answer][] = [
    ["throws", () => Promise.reject(new TypeError("fetch failed: getaddrinfo ENOTFOUND files.example"))],
    ["hangs", () => new Promise<Response>(() => {})],
    ["answers 503", () => new Response("busy", { status: 503 })],
  ];
  for (const [what, answer] of transient) {
    it(`a file server that ${what} is tried ${MAX_EFFECT_ATTEMPTS} times at most; the status keeps its remote URL and other work flows`, async () => {
      const asked = fileServer(answer);
      const { id, jobs } = await statusWith([image(`/t-${what.replace(/\W/g, "")}.png`)]);
      expect(asked.length).toBe(MAX_EFFECT_ATTEMPTS);
      expect(await deadLetters()).not.toHaveLength(0);
      // The status itself was stored and fanned out as usual.
      expect(jobs.length).toBeGreaterThan(0);
      const [m] = (await show(id)).media_attachments;
      expect(m.url).toBe(m.remote_url);
      expect(await r2Keys(m.id)).toEqual([]);
      await sql("DELETE FROM dead_letters");
    });
  }

  const permanent: [string, Answer][] = [
    ["answers 404", () => new Response("gone", { status: 404 })],
    ["sends bytes that are not a picture", () => bytes(new TextEncoder().encode("<html>not an image</html>"), "image/png")],
    ["sends a video for a picture", async () => bytes(mp4(320, 240, 1), "image/png")],
    ["sends more than 16 MB for a picture", () => bytes(new Uint8Array(16 * 1024 * 1024 + 1), "image/png")],
    [
      "streams more than 16 MB without a length",
      () =>
        new Response(
          new ReadableStream({
            pull(c) {
              c.enqueue(new Uint8Array(1024 * 1024));
              if (++sent > 17) c.close();
            },
          }),
          { headers: { "content-type": "image/png" } },
        ),
    ],
  ];
  let sent = 0;
  for (const [what, answer] of permanent) {
    it(`a file server that ${what} is asked once; nothing is stored and the remote URL stays`, async () => {
      const asked = fileServer(answer);
      const { id } = await statusWith([image(`/p-${what.replace(/\W/g, "")}.png`)]);
      expect(asked.length).toBe(1);
      expect(await deadLetters()).toHaveLength(0);
      const [m] = (await show(id)).media_attachments;
      expect(m.url).toBe(m.remote_url);
      expect(await r2Keys(m.id)).toEqual([]);
    });
  }

  it("a video longer than 99 MB is refused from its Content-Length, unread", async () => {
    let pulled = 0;
    fileServer(
      () =>
        new Response(
          new ReadableStream({
            pull(c) {
              pulled++;
              c.enqueue(new Uint8Array(1024));
              if (pulled > 100) c.close();
            },
          }),
          { headers: { "content-type": "video/mp4", "content-length": String(100 * 1024 * 1024) } },
        ),
    );
    const { id } = await statusWith([{ type: "Document", mediaType: "video/mp4", url: "https://files.example/huge.mp4" }]);
    const [m] = (await show(id)).media_attachments;
    expect(m.url).toBe(m.remote_url);
    expect(await r2Keys(m.id)).toEqual([]);
    expect(pulled).toBeLessThan(10);
  });

  it("a video whose body runs past its Content-Length stores nothing", async () => {
    const video = mp4(320, 240, 1, { mdatBytes: 50_000 });
    const asked = fileServer(() => new Response(video, { headers: { "content-type": "video/mp4", "content-length": String(video.length - 1000) } }));
    const { id } = await statusWith([{ type: "Document", mediaType: "video/mp4", url: "https://files.example/long.mp4" }]);
    expect(asked.length).toBe(1);
    const [m] = (await show(id)).media_attachments;
    expect(m.url).toBe(m.remote_url);
    expect(await r2Keys(m.id)).toEqual([]);
  });
});

describe("pruning cached remote media", () => {
  const daysAgo = (d: number) => Date.now() - d * 86_400_000;

  it("after MEDIA_CACHE_RETENTION_DAYS a file nobody here interacted with goes back to its remote URL; a kept Tern URL redirects and fetches it again", async () => {
    const pic = await photo(800, 600);
    const asked = fileServer(() => bytes(pic, "image/png"));
    const old = await statusWith([image("/old.png")]);
    const liked = await statusWith([image("/liked.png")]);
    const fresh = await statusWith([image("/fresh.png")]);
    expect(asked).toHaveLength(3);
    const [oldMedia] = (await show(old.id)).media_attachments;
    const [likedMedia] = (await show(liked.id)).media_attachments;
    const cachedUrl = oldMedia.url as string;
    // Two were cached 8 days ago; a local user favourited one of them.
    await sql("UPDATE media_attachments SET created_at = ? WHERE id IN (?, ?)", daysAgo(8), pad(oldMedia.id), pad(likedMedia.id));
    const fan = await makeUser("prunefan");
    expect((await fan.api.post(`/api/v1/statuses/${liked.id}/favourite`)).status).toBe(200);
    const fx = new Effects("http://localhost");
    expect(await pruneRemoteMedia(db(), env, fx, Date.now())).toBe(1);
    const [after] = (await show(old.id)).media_attachments;
    expect(after.url).toBe("https://files.example/old.png");
    expect(after.meta.original).toMatchObject({ width: 800, height: 600 }); // measured sizes stay
    expect(await r2Keys(oldMedia.id)).toEqual([]);
    expect((await show(liked.id)).media_attachments[0].url).toBe(likedMedia.url);
    expect((await show(fresh.id)).media_attachments[0].url.startsWith(ORIGIN)).toBe(true);
    // Running again changes nothing.
    expect(await pruneRemoteMedia(db(), env, fx, Date.now())).toBe(0);
    // A client that kept the Tern URL is sent to the remote file, and the file is fetched again.
    const res = await SELF.fetch(cachedUrl, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://files.example/old.png");
    await runJobs(ON);
    expect(asked).toHaveLength(4);
    const [back] = (await show(old.id)).media_attachments;
    expect(back.url.startsWith(`${ORIGIN}/media/`)).toBe(true);
    expect(back.url).not.toBe(cachedUrl);
    // The old URL now leads to the new copy.
    const again = await SELF.fetch(cachedUrl, { redirect: "manual" });
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location")!, ORIGIN).href).toBe(back.url);
  });

  it("MEDIA_CACHE_RETENTION_DAYS=0 keeps cached files for ever", async () => {
    expect(await pruneRemoteMedia(db(), { ...env, MEDIA_CACHE_RETENTION_DAYS: "0" }, new Effects("http://localhost"), Date.now() + 1e12)).toBe(0);
  });
});
