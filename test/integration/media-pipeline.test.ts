// Issue 32, points 1 and 2: what an upload becomes through the Images binding (sharp under miniflare): a preview
// within Mastodon's small size, a blurhash, the original upright and within 3840×2160, AVIF/HEIC as JPEG, animated GIF
// kept with a still preview; video and audio described from their headers, with the thumbnail treated as a preview.
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SUPPORTED_MIME_TYPES } from "../../src/lib/http/media-types";
import { decodeSmallPng } from "../../src/media/png-pixels";
import { sniff } from "../../src/media/sniff";
import { createMedia } from "../../src/services/statuses/media";
import { processStagedMedia } from "../../src/services/statuses/media-processing";
import { anon, db, makeUser, type TestUser } from "./helpers";
import { bytesOf, gif, jpeg, png, pngHeaderOnly, statusOf } from "./media-fixtures";
import { queued, runQueuedJobs, unpack } from "./queues";
import { flac, mp3, mp4Timed, oggVorbis, photo, pngOf, wav, webm, withOrientation } from "./media-pipeline-fixtures";

function form(bytes: Uint8Array, name: string, type: string, extra: Record<string, string | File> = {}) {
  const f = new FormData();
  f.append("file", new File([bytes], name, { type }));
  for (const [k, v] of Object.entries(extra)) f.append(k, v);
  return f;
}
const upload = (u: TestUser, f: FormData) => u.api.post("/api/v2/media", f, "multipart");
const served = async (url: string) => {
  const res = await SELF.fetch(url);
  return { type: res.headers.get("content-type"), bytes: await bytesOf(res) };
};
const BLURHASH = /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{36}$/; // 4×4 components: 1 + 1 + 4 + 2 × 15 characters

/** RGBA of a stored picture, drawn at most 32×32 by the binding (the test reads pixels the way the blurhash does). */
async function pixelsOf(bytes: Uint8Array) {
  const out = await env
    .IMAGES!.input(new Blob([bytes]).stream())
    .transform({ width: 32, height: 32, fit: "scale-down" })
    .output({ format: "image/png" });
  return decodeSmallPng(new Uint8Array(await out.response().arrayBuffer()));
}

describe("images through the Images binding", () => {
  it("a 1600×1200 photo gets a WebP preview within 480×480 of area, sizes for both, and a blurhash", async () => {
    const u = await makeUser();
    const bytes = await photo(1600, 1200);
    const res = await upload(u, form(bytes, "photo.png", "image/png", { focus: "-0.5,0.25" }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const m = res.body;
    expect(m.type).toBe("image");
    expect(m.meta.original).toEqual({ width: 1600, height: 1200, size: "1600x1200", aspect: 1600 / 1200 });
    // Mastodon's geometry, rounded down: the box ⌊√(230400·4/3)⌋ × ⌊√(230400·3/4)⌋ = 554 × 415.
    expect(m.meta.small).toMatchObject({ width: 553, height: 415, size: "553x415" });
    expect(m.meta.small.width * m.meta.small.height).toBeLessThanOrEqual(230_400);
    expect(m.meta.focus).toEqual({ x: -0.5, y: 0.25 });
    expect(m.blurhash).toMatch(BLURHASH);
    expect(m.preview_url).toMatch(/\/small\.webp$/);
    expect(m.url).toMatch(/\/original\.png$/);
    const preview = await served(m.preview_url);
    const original = await served(m.url);
    expect(preview.type).toBe("image/webp");
    expect(sniff(preview.bytes)).toMatchObject({ mime: "image/webp", width: 553, height: 415 });
    expect(preview.bytes.length * 10).toBeLessThan(original.bytes.length); // a small fraction of the original
    const shown = await u.api.get(`/api/v1/media/${m.id}`);
    expect(shown.body).toMatchObject({ blurhash: m.blurhash, preview_url: m.preview_url, meta: { small: m.meta.small } });
  });

  it("a small picture is its own preview, still with a blurhash", async () => {
    const u = await makeUser();
    const res = await upload(u, form(await png(40, 30), "s.png", "image/png"));
    expect(res.status).toBe(200);
    expect(res.body.preview_url).toBe(res.body.url);
    expect(res.body.meta.small).toEqual(res.body.meta.original);
    expect(res.body.blurhash).toMatch(BLURHASH);
    expect((await env.MEDIA.list({ prefix: `media_attachments/${res.body.id}/` })).objects).toHaveLength(1);
  });

  it("an original above 3840×2160 is scaled down to that area, keeping its aspect (v1: before the answer)", async () => {
    const u = await makeUser();
    const big = await pngOf(5000, 3000, (x, y) => [x % 256, y % 256, 128]);
    const res = await u.api.post("/api/v1/media", form(big, "big.png", "image/png"), "multipart");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { width, height } = res.body.meta.original;
    expect(width * height).toBeLessThanOrEqual(8_294_400);
    expect(width * height).toBeGreaterThan(8_280_000);
    expect(Math.abs(width / height - 5 / 3)).toBeLessThan(0.002);
    const stored = await served(res.body.url);
    expect(sniff(stored.bytes)).toMatchObject({ width, height });
  });

  it("EXIF orientation turns the pixels, and no orientation (or other metadata) is left in the stored file", async () => {
    const u = await makeUser();
    // Stored sideways: left half red, right half blue, 40×20; Orientation 6 says "turn 90° clockwise to view".
    const sideways = await pngOf(40, 20, (x) => (x < 20 ? [255, 0, 0] : [0, 0, 255]));
    const res = await upload(u, form(withOrientation(sideways, 6), "rot.png", "image/png"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta.original).toMatchObject({ width: 20, height: 40 });
    const stored = await served(res.body.url);
    expect(new TextDecoder("latin1").decode(stored.bytes)).not.toContain("eXIf");
    expect(sniff(stored.bytes)).toMatchObject({ width: 20, height: 40 });
    const px = await pixelsOf(stored.bytes);
    if (!px) throw new Error("no pixels");
    const at = (x: number, y: number) => Array.from(px.data.subarray((y * px.width + x) * 4, (y * px.width + x) * 4 + 3));
    // After a clockwise quarter turn the left (red) column is on top.
    expect(at(Math.floor(px.width / 2), 1)[0]).toBeGreaterThan(200);
    expect(at(Math.floor(px.width / 2), px.height - 2)[2]).toBeGreaterThan(200);
    // A JPEG's orientation is read from its APP1 the same way: 16×8 stored, 8×16 shown.
    const j = jpeg(16, 8);
    const app1 = [0xff, 0xe1, 0, 34, ...Array.from("Exif\0\0", (c) => c.charCodeAt(0))];
    const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0];
    const rotated = Uint8Array.from([...j.subarray(0, 2), ...app1, ...tiff, ...j.subarray(2)]);
    const r2 = await upload(u, form(rotated, "r.jpg", "image/jpeg"));
    expect(r2.status, JSON.stringify(r2.body)).toBe(200);
    expect(r2.body.meta.original).toMatchObject({ width: 8, height: 16 });
    const jstored = await served(r2.body.url);
    expect(sniff(jstored.bytes)).toMatchObject({ mime: "image/jpeg", width: 8, height: 16, orientation: 1 });
  });

  it("AVIF comes in and is stored as JPEG", async () => {
    const u = await makeUser();
    const out = await env.IMAGES!.input(new Blob([await photo(300, 200)]).stream()).output({ format: "image/avif" });
    const avif = new Uint8Array(await out.response().arrayBuffer());
    expect(sniff(avif)).toMatchObject({ mime: "image/avif", width: 300, height: 200 });
    const res = await upload(u, form(avif, "a.avif", "image/avif"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.url).toMatch(/\/original\.jpg$/);
    expect(res.body.meta.original).toMatchObject({ width: 300, height: 200 });
    expect((await served(res.body.url)).type).toBe("image/jpeg");
    expect(res.body.blurhash).toMatch(BLURHASH);
  });

  it("HEIC: read from its header; the local sharp build has no HEVC decoder, so here it is a clear 422 with nothing stored", async () => {
    // ftyp heic + meta/iprp/ipco/ispe (4032×3024) + an mdat that no decoder here can read. On Cloudflare the binding
    // decodes HEIC; miniflare's sharp (prebuilt libvips with libheif for AV1 only) cannot.
    const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
    const a = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
    const box = (t: string, ...p: number[][]) => [...be32(8 + p.flat().length), ...a(t), ...p.flat()];
    const ispe = box("ispe", [0, 0, 0, 0], be32(4032), be32(3024));
    const heic = Uint8Array.from([
      ...box("ftyp", a("heic"), be32(0), a("mif1heic")),
      ...box("meta", [0, 0, 0, 0], box("iprp", box("ipco", ispe))),
      ...box("mdat", new Array(256).fill(7)),
    ]);
    expect(sniff(heic)).toMatchObject({ mime: "image/heic", width: 4032, height: 3024 });
    const u = await makeUser();
    const before = (await env.MEDIA.list()).objects.length;
    const res = await u.api.post("/api/v1/media", form(heic, "IMG_1.HEIC", "image/heic"), "multipart");
    expect([200, 422]).toContain(res.status);
    if (res.status === 422) {
      expect(res.body.error).toMatch(/could not be processed|does not match/);
      expect((await env.MEDIA.list()).objects.length).toBe(before);
    } else expect(res.body.url).toMatch(/\/original\.jpg$/);
  });

  it("an animated GIF stays an animated GIF, with a still WebP preview and a blurhash", async () => {
    const u = await makeUser();
    const res = await upload(u, form(gif(60, 40, 3), "a.gif", "image/gif"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.type).toBe("image");
    const original = await served(res.body.url);
    expect(original.type).toBe("image/gif");
    expect(sniff(original.bytes)).toMatchObject({ frames: 3 });
    expect(res.body.preview_url).toMatch(/\/small\.webp$/);
    const preview = await served(res.body.preview_url);
    expect(sniff(preview.bytes)?.frames ?? 1).toBeLessThanOrEqual(1);
    expect(res.body.blurhash).toMatch(BLURHASH);
  });

  it("/api/v2/instance advertises exactly the types uploads accept, HEIC and AVIF among them", async () => {
    const res = await anon.get("/api/v2/instance");
    const types: string[] = res.body.configuration.media_attachments.supported_mime_types;
    expect(types).toEqual([...SUPPORTED_MIME_TYPES]);
    for (const t of ["image/heic", "image/heif", "image/avif", "image/webp", "video/mp4", "audio/mpeg", "audio/flac"]) expect(types).toContain(t);
    expect(types.some((t) => t.includes("svg"))).toBe(false);
  });
});

describe("an instance without the Images binding", () => {
  it("stores pictures stripped, without preview or blurhash, and refuses HEIC/AVIF with a clear 422", async () => {
    const u = await makeUser();
    const { IMAGES: _, ...bare } = env;
    const row = await createMedia(db(), bare, u.id, { file: new File([await photo(800, 600)], "p.png", { type: "image/png" }) });
    expect(row).toMatchObject({ type: "image", previewKey: null, blurhash: null, processing: 0 });
    expect(row.meta).toMatchObject({ original: { width: 800, height: 600 }, small: { width: 800, height: 600 } });
    const avif = new Uint8Array(
      await (await env.IMAGES!.input(new Blob([await photo(60, 40)]).stream()).output({ format: "image/avif" })).response().arrayBuffer(),
    );
    const err = await createMedia(db(), bare, u.id, { file: new File([avif], "a.avif", { type: "image/avif" }) }).catch((e) => e);
    expect(err?.status).toBe(422);
    expect(err.message).toMatch(/Images binding/);
  });
});

describe("POST /api/v2/media: 202 while a large picture is processed", () => {
  it("answers 202 with url null, GET says 206, and once processed 200 with the scaled original, preview and blurhash", async () => {
    const u = await makeUser();
    const big = await pngOf(5000, 3000, (x, y) => [x % 256, (y * 3) % 256, 90]);
    const res = await upload(u, form(big, "big.png", "image/png", { description: "wide" }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ type: "image", url: null, preview_url: null, description: "wide" });
    const id = res.body.id;
    expect((await u.api.get(`/api/v1/media/${id}`)).status).toBe(206);
    // Not attachable yet, as Mastodon.
    const early = await u.api.post("/api/v1/statuses", { status: "hi", media_ids: [id] });
    expect(early.status).toBe(422);
    expect(queued.jobs.some((j) => unpack(j).some((e) => e.type === "process_media"))).toBe(true);
    await runQueuedJobs();
    const done = await u.api.get(`/api/v1/media/${id}`);
    expect(done.status).toBe(200);
    expect(done.body.url).toMatch(/\/original\.png$/);
    expect(done.body.preview_url).toMatch(/\/small\.webp$/);
    expect(done.body.blurhash).toMatch(BLURHASH);
    expect(done.body.meta.original.width * done.body.meta.original.height).toBeLessThanOrEqual(8_294_400);
    // Only the processed files are left: the upload as it came is gone.
    const keys = (await env.MEDIA.list({ prefix: `media_attachments/${id}/` })).objects.map((o) => o.key);
    expect(keys.sort()).toEqual([new URL(done.body.url).pathname, new URL(done.body.preview_url).pathname].map((p) => p.replace(/^\/media\//, "")).sort());
    // Running the effect again changes nothing.
    await processStagedMedia(db(), env, id);
    expect((await u.api.get(`/api/v1/media/${id}`)).body.url).toBe(done.body.url);
    const posted = await u.api.post("/api/v1/statuses", { status: "hi", media_ids: [id] });
    expect(posted.status).toBe(200);
  });

  it("a large file the decoder refuses after the 202: GET answers 422, the upload is removed; small files and video are 200 at once", async () => {
    const u = await makeUser();
    const res = await upload(u, form(pngHeaderOnly(6000, 5000), "bad.png", "image/png"));
    expect(res.status).toBe(202);
    await runQueuedJobs();
    const got = await u.api.get(`/api/v1/media/${res.body.id}`);
    expect(got.status).toBe(422);
    expect(got.body.error).toMatch(/could not be decoded/);
    expect((await env.MEDIA.list({ prefix: `media_attachments/${res.body.id}/` })).objects).toHaveLength(0);
    expect((await upload(u, form(await png(30, 20), "s.png", "image/png"))).status).toBe(200);
    expect((await upload(u, form(mp4Timed(640, 360, 1, 24, 1000), "v.mp4", "video/mp4"))).status).toBe(200);
  });

  it("the binding failing after the 202: the effect throws for the runner to retry, the upload is kept, nothing else written", async () => {
    const u = await makeUser();
    const res = await upload(u, form(await pngOf(4000, 3000, (x) => [x % 256, 0, 0]), "big.png", "image/png"));
    expect(res.status).toBe(202);
    const before = (await env.MEDIA.list({ prefix: `media_attachments/${res.body.id}/` })).objects.map((o) => o.key);
    const IMAGES = { info: () => Promise.reject(new Error("internal error")), input: () => ({}) } as unknown as ImagesBinding;
    const err = await processStagedMedia(db(), { ...env, IMAGES }, res.body.id).catch((e) => e);
    expect(err?.status).toBe(503);
    expect((await env.MEDIA.list({ prefix: `media_attachments/${res.body.id}/` })).objects.map((o) => o.key)).toEqual(before);
    expect((await u.api.get(`/api/v1/media/${res.body.id}`)).status).toBe(206);
    await runQueuedJobs(); // the real binding: the retry succeeds
    expect((await u.api.get(`/api/v1/media/${res.body.id}`)).status).toBe(200);
  });
});

describe("video and audio, described from their headers", () => {
  it("MP4: size, duration, frame rate, bitrate and the audio track, without decoding", async () => {
    const u = await makeUser();
    const file = mp4Timed(1280, 720, 4, 30, 400_000);
    const res = await upload(u, form(file, "clip.mp4", "video/mp4"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.type).toBe("video");
    expect(res.body.meta).toMatchObject({
      width: 1280,
      height: 720,
      size: "1280x720",
      duration: 4,
      length: "0:00:04.00",
      fps: 30,
      audio_encode: "mp4a",
      audio_bitrate: "44100 Hz",
      audio_channels: "stereo",
      original: { width: 1280, height: 720, frame_rate: "30/1", duration: 4, bitrate: Math.round((file.length * 8) / 4) },
    });
  });

  it("WebM, WAV, FLAC, MP3 and Ogg: durations and what the headers say of the sound", async () => {
    const u = await makeUser();
    const w = await upload(u, form(webm(640, 480, 2.5, 25), "v.webm", "video/webm"));
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    expect(w.body.meta).toMatchObject({ width: 640, height: 480, duration: 2.5, fps: 25, audio_encode: "A_OPUS", original: { frame_rate: "25/1" } });
    const cases: [Uint8Array, string, string, number][] = [
      [wav(1.5), "a.wav", "audio/wav", 1.5],
      [flac(3), "a.flac", "audio/flac", 3],
      [mp3(100), "a.mp3", "audio/mpeg", Math.round(((100 * 417 * 8) / 128_000) * 100) / 100],
      [oggVorbis(7), "a.ogg", "audio/ogg", 7],
    ];
    for (const [bytes, name, type, duration] of cases) {
      const r = await upload(u, form(bytes, name, type));
      expect(r.status, `${name}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.type, name).toBe("audio");
      expect(r.body.meta.duration, name).toBe(duration);
      expect(r.body.meta.original.bitrate, name).toBeGreaterThan(0);
      expect(r.body.preview_url, name).toBeNull();
    }
  });

  it("a video's thumbnail becomes its preview: within the small size, upright, WebP, with a blurhash", async () => {
    const u = await makeUser();
    const thumb = new File([await photo(1200, 900)], "t.png", { type: "image/png" });
    const res = await upload(u, form(mp4Timed(640, 360, 1, 24, 1000), "v.mp4", "video/mp4", { thumbnail: thumb }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.preview_url).toMatch(/\/thumbnail\.webp$/);
    expect(res.body.meta.small).toMatchObject({ width: 553, height: 415 });
    expect(res.body.blurhash).toMatch(BLURHASH);
    expect((await served(res.body.preview_url)).type).toBe("image/webp");
    // Replaced later through PUT: a new preview and blurhash, the old object gone.
    const old = res.body.preview_url;
    const f = new FormData();
    f.append("thumbnail", new File([await png(30, 30, [200, 10, 10])], "t2.png", { type: "image/png" }));
    const put = await u.api.put(`/api/v1/media/${res.body.id}`, f, "multipart");
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.preview_url).not.toBe(old);
    expect(put.body.blurhash).toMatch(BLURHASH);
    expect(put.body.blurhash).not.toBe(res.body.blurhash);
    expect(await statusOf(old)).toBe(404);
  });
});
