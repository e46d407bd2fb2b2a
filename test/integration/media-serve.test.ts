import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, cfg } from "./helpers";
import { bytesOf, statusOf, gif, jpeg, mp4, png, pngHeaderOnly } from "./media-fixtures";
import { storeUpload } from "../../src/media/store";
import { sniff } from "../../src/media/sniff";
import { validKey } from "../../src/api/media/serve";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** An attachment object is served only while its row names it (src/api/media/serve.ts). */
const attachmentRow = (id: string, key: string, contentType: string) =>
  env.DB.prepare("INSERT INTO media_attachments (id, account_id, status_id, type, file_key, content_type, created_at) VALUES (?, ?, ?, 'image', ?, ?, ?)")
    .bind(id.padStart(20, "0"), "1".padStart(20, "0"), "1".padStart(20, "0"), key, contentType, Date.now())
    .run();

describe("default avatar and header", () => {
  for (const p of ["/avatars/original/missing.png", "/headers/original/missing.png"]) {
    it(`serves ${p} as a PNG`, async () => {
      const res = await SELF.fetch(`${ORIGIN}${p}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const bytes = await bytesOf(res);
      expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
      const s = sniff(bytes);
      expect(s?.width).toBeGreaterThan(0);
    });
  }
});

describe("GET /media/:key", () => {
  it("404s for missing objects and for keys the server would never make", async () => {
    await env.MEDIA.put("media_attachments/1/original.png", await png(1, 1), { httpMetadata: { contentType: "image/png" } });
    await attachmentRow("1", "media_attachments/1/original.png", "image/png");
    expect(await statusOf(`${ORIGIN}/media/media_attachments/1/original.png`)).toBe(200);
    for (const bad of [
      "/media/media_attachments/2/original.png",
      "/media/media_attachments/%2e%2e/original.png",
      "/media/media_attachments/1/..%2foriginal.png",
      "/media/original.png",
      "/media/a/b/.png",
      "/media/a/b c.png",
    ]) {
      expect(await statusOf(`${ORIGIN}${bad}`), bad).toBe(404);
    }
    expect(validKey("../x/original.png")).toBe(false);
    expect(validKey("a/b/c/original.webp")).toBe(true);
  });

  it("marks non-media types as attachments and never inline", async () => {
    await env.MEDIA.put("exports/1/data.html", "<script>alert(1)</script>", { httpMetadata: { contentType: "text/html" } });
    const res = await SELF.fetch(`${ORIGIN}/media/exports/1/data.html`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(res.headers.get("content-disposition")).toBe("attachment");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
  });

  it("answers byte ranges and conditional requests", async () => {
    const bytes = mp4(320, 240, 1, { mdatBytes: 4000 });
    await env.MEDIA.put("media_attachments/7/original.mp4", bytes, { httpMetadata: { contentType: "video/mp4" } });
    await attachmentRow("7", "media_attachments/7/original.mp4", "video/mp4");
    const url = `${ORIGIN}/media/media_attachments/7/original.mp4`;
    const part = await SELF.fetch(url, { headers: { range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 10-19/${bytes.length}`);
    expect(await bytesOf(part)).toEqual(bytes.subarray(10, 20));
    const full = await SELF.fetch(url);
    const etag = full.headers.get("etag")!;
    await full.arrayBuffer();
    const again = await SELF.fetch(url, { headers: { "if-none-match": etag } });
    await again.arrayBuffer();
    expect(again.status).toBe(304);
  });
});

describe("storeUpload", () => {
  it("stores avatars as images under a random key and refuses other types", async () => {
    const file = new File([await png(40, 30)], "../me.png", { type: "text/html" });
    const s = await storeUpload(env, cfg(), file, "avatar");
    expect(s).toMatchObject({ contentType: "image/png", type: "image", size: file.size, meta: { original: { width: 40, height: 30 } } });
    expect(s.key).toMatch(/^accounts\/avatars\/[0-9a-f]{32}\/original\.png$/);
    expect((await env.MEDIA.head(s.key))?.httpMetadata?.contentType).toBe("image/png");
    const h = await storeUpload(env, cfg(), new File([jpeg(8, 8)], "h.jpg"), "header");
    expect(h.key).toMatch(/^accounts\/headers\/[0-9a-f]{32}\/original\.jpg$/);

    await expect(storeUpload(env, cfg(), new File([mp4(10, 10, 1)], "v.mp4"), "avatar")).rejects.toMatchObject({ status: 422 });
    await expect(storeUpload(env, cfg(), new File([pngHeaderOnly(10, 10, 9 * 1024 * 1024)], "big.png"), "header")).rejects.toMatchObject({ status: 422 });
    await expect(storeUpload(env, cfg(), new File(["<svg/>"], "x.svg"), "avatar")).rejects.toMatchObject({ status: 422 });
  });
});

describe("sniff", () => {
  it("reads WebP, WAV, MP3, Ogg and WebM headers and rejects text", () => {
    const enc = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
    const vp8x = Uint8Array.from([...enc("RIFF"), 0, 0, 0, 0, ...enc("WEBPVP8X"), 10, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 49, 0, 0]);
    expect(sniff(vp8x)).toMatchObject({ mime: "image/webp", width: 100, height: 50 });
    const vp8l = Uint8Array.from([...enc("RIFF"), 0, 0, 0, 0, ...enc("WEBPVP8L"), 5, 0, 0, 0, 0x2f, 0x09, 0xc0, 0x04, 0x00]);
    expect(sniff(vp8l)).toMatchObject({ width: 10, height: 20 });
    expect(sniff(Uint8Array.from([...enc("RIFF"), 0, 0, 0, 0, ...enc("WAVEfmt ")]))?.mime).toBe("audio/wav");
    expect(sniff(Uint8Array.from([...enc("ID3"), 4, 0, 0, 0, 0, 0, 0, 0, 0]))?.mime).toBe("audio/mpeg");
    expect(sniff(Uint8Array.from([...enc("OggS"), ...new Array(22).fill(0), 1, 30, 1, ...enc("vorbis")]))?.kind).toBe("audio");
    // EBML header (DocType webm), Segment > Tracks > TrackEntry > {TrackType 1, Video {PixelWidth 1280, PixelHeight 720}}
    const webm = Uint8Array.from([
      0x1a,
      0x45,
      0xdf,
      0xa3,
      0x87,
      0x42,
      0x82,
      0x84,
      ...enc("webm"),
      0x18,
      0x53,
      0x80,
      0x67,
      0x01,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0x16,
      0x54,
      0xae,
      0x6b,
      0x8f,
      0xae,
      0x8d,
      0x83,
      0x81,
      0x01,
      0xe0,
      0x88,
      0xb0,
      0x82,
      0x05,
      0x00,
      0xba,
      0x82,
      0x02,
      0xd0,
    ]);
    expect(sniff(webm)).toMatchObject({ mime: "video/webm", width: 1280, height: 720 });
    expect(sniff(new TextEncoder().encode("<html><body>hello</body></html>"))).toBeNull();
    expect(sniff(gif(3, 2, 5))).toMatchObject({ width: 3, height: 2, frames: 5 });
    // EXIF orientation 6 (rotate 90°): a 16x8 frame is shown 8x16.
    const plain = jpeg(16, 8);
    const tiff = [...enc("MM"), 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0];
    const app1 = [0xff, 0xe1, 0, 2 + 6 + tiff.length, ...enc("Exif"), 0, 0, ...tiff];
    const rotated = Uint8Array.from([0xff, 0xd8, ...app1, ...plain.subarray(2)]);
    expect(sniff(rotated)).toMatchObject({ mime: "image/jpeg", width: 8, height: 16 });
  });
});
