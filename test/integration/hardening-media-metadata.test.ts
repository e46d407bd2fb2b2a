// Security (issue, class 4): uploaded photos lose their metadata. JPEG, PNG, WebP and GIF files are built here with
// EXIF (GPS included), XMP, IPTC, comments, text chunks and trailing bytes; what the server then serves carries none
// of it, keeps the picture (every segment or chunk that draws it, byte for byte), still parses, and keeps the
// visual orientation through a minimal EXIF that holds only the Orientation tag.
import { SELF } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ORIGIN, makeUser, type TestUser } from "./helpers";
import { bytesOf, concat, gif, jpeg, png } from "./media-fixtures";
import { sniff } from "../../src/media/sniff";
import { orientationTiff, stripMetadata } from "../../src/media/strip-metadata";

const ascii = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));
const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];

/** Every secret string planted in the test files. */
const SECRETS = ["SECRET", "GPSLAT", "Canon", "xmpmeta", "Photoshop", "48.8584"];

function containsText(b: Uint8Array, text: string): boolean {
  const needle = ascii(text);
  outer: for (let i = 0; i + needle.length <= b.length; i++) {
    for (let j = 0; j < needle.length; j++) if (b[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

function expectClean(b: Uint8Array) {
  for (const s of SECRETS) expect(containsText(b, s), s).toBe(false);
}

/**
 * A big-endian TIFF as cameras write it: IFD0 with Make, (Orientation), a GPS IFD pointer; the GPS IFD with latitude
 * reference and latitude (rationals), and a maker string.
 */
function cameraTiff(orientation?: number): Uint8Array {
  const entries: number[][] = [];
  const make = ascii("Canon SECRET-SERIAL\0");
  const ifd0Count = orientation ? 3 : 2;
  const ifd0Size = 2 + ifd0Count * 12 + 4;
  const makeAt = 8 + ifd0Size;
  const gpsAt = makeAt + make.length + (make.length & 1);
  entries.push([...be16(0x010f), ...be16(2), ...be32(make.length), ...be32(makeAt)]);
  if (orientation) entries.push([...be16(0x0112), ...be16(3), ...be32(1), ...be16(orientation), 0, 0]);
  entries.push([...be16(0x8825), ...be16(4), ...be32(1), ...be32(gpsAt)]);
  const gpsSize = 2 + 2 * 12 + 4;
  const latAt = gpsAt + gpsSize;
  const gps = [...be16(2), ...be16(0x0001), ...be16(2), ...be32(2), ...ascii("N\0"), 0, 0, ...be16(0x0002), ...be16(5), ...be32(3), ...be32(latAt), ...be32(0)];
  const lat = [...be32(48), ...be32(1), ...be32(51), ...be32(1), ...be32(488584), ...be32(10000)]; // 48.8584
  return Uint8Array.from([
    ...ascii("MM"),
    0,
    42,
    ...be32(8),
    ...be16(ifd0Count),
    ...entries.flat(),
    ...be32(0),
    ...make,
    ...(make.length & 1 ? [0] : []),
    ...gps,
    ...lat,
    ...ascii("GPSLAT"),
  ]);
}

const XMP = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description exif:GPSLatitude="48.8584N" dc:creator="SECRET"/></rdf:RDF></x:xmpmeta>`;
const ICC = concat(ascii("ICC_PROFILE\0"), [1, 1], new Uint8Array(40).fill(7));

function segment(marker: number, payload: Uint8Array | number[]): Uint8Array {
  const p = payload instanceof Uint8Array ? payload : Uint8Array.from(payload);
  return concat([0xff, marker, ...be16(p.length + 2)], p);
}

/** The fixture JPEG with camera metadata around its JFIF header, a JFIF thumbnail and junk after EOI. */
function cameraJpeg(w: number, h: number, orientation?: number): { dirty: Uint8Array; clean: Uint8Array } {
  const base = jpeg(w, h);
  const app0End = 2 + 18; // SOI + the fixture's 16-byte APP0
  const jfifThumb = segment(0xe0, [...ascii("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 1, 1, ...ascii("SEC")]); // 1×1 RGB thumbnail
  const exif = segment(0xe1, concat(ascii("Exif\0\0"), cameraTiff(orientation)));
  const xmp = segment(0xe1, concat(ascii("http://ns.adobe.com/xap/1.0/\0"), ascii(XMP)));
  const iptc = segment(0xed, concat(ascii("Photoshop 3.0\0"), ascii("8BIM"), [4, 4, 0, 0, 0, 0, 0, 12], ascii("SECRET-IPTC!")));
  const com = segment(0xfe, ascii("SECRET comment with \xff\xd9 inside"));
  const mpf = segment(0xe2, concat(ascii("MPF\0"), ascii("SECRET-MPF")));
  const icc = segment(0xe2, ICC);
  const adobe = segment(0xee, [...ascii("Adobe"), 0, 100, 0, 0, 0, 0, 1]);
  const body = base.subarray(app0End);
  const dirty = concat([0xff, 0xd8], jfifThumb, exif, xmp, icc, iptc, com, mpf, adobe, [0xff, 0xff], body, ascii("SECRET trailing zip"));
  const keptExif = orientation && orientation !== 1 ? segment(0xe1, concat(ascii("Exif\0\0"), orientationTiff(orientation))) : new Uint8Array();
  const clean = concat(base.subarray(0, app0End), keptExif, icc, adobe, body);
  return { dirty, clean };
}

function pngChunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const d = data instanceof Uint8Array ? data : Uint8Array.from(data);
  const td = concat(ascii(type), d);
  let c = 0xffffffff;
  for (const byte of td) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return concat(be32(d.length), td, be32((c ^ 0xffffffff) >>> 0));
}

/** The fixture PNG with text, eXIf, tIME and a private chunk before its IDAT, an iCCP kept, and bytes after IEND. */
async function cameraPng(w: number, h: number, orientation?: number): Promise<{ dirty: Uint8Array; clean: Uint8Array }> {
  const base = await png(w, h);
  const ihdrEnd = 8 + 25;
  const iccp = pngChunk("iCCP", concat(ascii("icc\0"), [0], [0x78, 0x9c, 0x03, 0, 0, 0, 0, 1]));
  const dirty = concat(
    base.subarray(0, ihdrEnd),
    pngChunk("tEXt", ascii("Author\0SECRET person")),
    pngChunk("eXIf", cameraTiff(orientation)),
    iccp,
    pngChunk("zTXt", concat(ascii("Comment\0"), [0], ascii("SECRET not really deflated"))),
    pngChunk("iTXt", concat(ascii("XML:com.adobe.xmp\0"), [0, 0, 0, 0], ascii(XMP))),
    pngChunk("tIME", [0x07, 0xe8, 1, 2, 3, 4, 5]),
    pngChunk("caBX", ascii("SECRET c2pa manifest")),
    base.subarray(ihdrEnd),
    ascii("SECRET appended"),
  );
  const keptExif = orientation && orientation !== 1 ? pngChunk("eXIf", orientationTiff(orientation)) : new Uint8Array();
  const clean = concat(base.subarray(0, ihdrEnd), keptExif, iccp, base.subarray(ihdrEnd));
  return { dirty, clean };
}

function riffChunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const d = data instanceof Uint8Array ? data : Uint8Array.from(data);
  return concat(ascii(type), le32(d.length), d, d.length & 1 ? [0] : []);
}

function riff(...chunks: Uint8Array[]): Uint8Array {
  const body = concat(ascii("WEBP"), ...chunks);
  return concat(ascii("RIFF"), le32(body.length), body);
}

const VP8L = [0x2f, 0x09, 0xc0, 0x04, 0x00]; // 10×20 header (as in media-serve.test.ts), no pixels needed by sniff

/** An extended WebP: VP8X flags ICC + EXIF + XMP, ICCP, the image, EXIF (GPS) and XMP chunks. */
function cameraWebp(orientation?: number): { dirty: Uint8Array; clean: Uint8Array } {
  const vp8x = (flags: number) => riffChunk("VP8X", [flags, 0, 0, 0, 9, 0, 0, 19, 0, 0]);
  const iccp = riffChunk("ICCP", new Uint8Array(21).fill(3)); // odd length: padded
  const image = riffChunk("VP8L", VP8L);
  const dirty = riff(
    vp8x(0x20 | 0x08 | 0x04),
    iccp,
    image,
    riffChunk("EXIF", cameraTiff(orientation)),
    riffChunk("XMP ", ascii(XMP)),
    riffChunk("SECR", ascii("SECRET unknown chunk")),
  );
  const clean =
    orientation && orientation !== 1 ? riff(vp8x(0x20 | 0x08), iccp, image, riffChunk("EXIF", orientationTiff(orientation))) : riff(vp8x(0x20), iccp, image);
  return { dirty: concat(dirty, ascii("SECRET after RIFF")), clean };
}

/** The fixture GIF with a comment and an XMP application extension; NETSCAPE looping kept. */
function cameraGif(): { dirty: Uint8Array; clean: Uint8Array } {
  const base = gif(3, 2, 2);
  const afterGct = 13 + 6;
  const comment = [0x21, 0xfe, 13, ...ascii("SECRET-camera"), 0];
  const xmp = ascii(XMP);
  const xmpExt = [0x21, 0xff, 11, ...ascii("XMP DataXMP"), ...xmp.flatMap((b, i) => (i % 200 === 0 ? [Math.min(200, xmp.length - i), b] : [b])), 0];
  const dirty = concat(base.subarray(0, afterGct), comment, xmpExt, base.subarray(afterGct, base.length - 1), comment, [0x3b], ascii("SECRET"));
  return { dirty, clean: base };
}

function form(bytes: Uint8Array, name: string, type: string) {
  const f = new FormData();
  f.append("file", new File([bytes], name, { type }));
  return f;
}

async function uploadAndFetch(u: TestUser, bytes: Uint8Array, name: string, type: string) {
  const res = await u.api.post("/api/v2/media", form(bytes, name, type), "multipart");
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const served = await SELF.fetch(res.body.url);
  expect(served.status).toBe(200);
  return { entity: res.body, served: await bytesOf(served) };
}

describe("uploaded images are served without metadata", () => {
  it("JPEG: EXIF with GPS, XMP, IPTC, COM, MPF, the JFIF thumbnail and trailing bytes are gone; the picture is intact", async () => {
    const u = await makeUser("stripjpeg");
    const { dirty, clean } = cameraJpeg(24, 16);
    expect(containsText(dirty, "GPSLAT")).toBe(true);
    const { entity, served } = await uploadAndFetch(u, dirty, "IMG_0001.jpg", "image/jpeg");
    expect(served).toEqual(clean);
    expectClean(served);
    expect(sniff(served)).toMatchObject({ mime: "image/jpeg", width: 24, height: 16 });
    expect(entity.meta.original).toMatchObject({ width: 24, height: 16 });
  });

  it("JPEG rotated by its camera: the pixels are turned (Images binding) and no EXIF at all is left", async () => {
    const u = await makeUser("stripjpegrot");
    for (const orientation of [3, 6, 8]) {
      const { dirty } = cameraJpeg(24, 16, orientation);
      const { entity, served } = await uploadAndFetch(u, dirty, "rotated.jpg", "image/jpeg");
      expectClean(served);
      const turned = orientation >= 5;
      expect(sniff(dirty)).toMatchObject({ width: turned ? 16 : 24, height: turned ? 24 : 16 });
      expect(sniff(served)).toMatchObject({ width: turned ? 16 : 24, height: turned ? 24 : 16, orientation: 1 });
      expect(entity.meta.original).toMatchObject({ width: turned ? 16 : 24, height: turned ? 24 : 16 });
      expect(containsText(served, "Exif")).toBe(false);
    }
  });

  it("PNG: tEXt, zTXt, iTXt, eXIf, tIME, private chunks and bytes after IEND are gone; iCCP stays", async () => {
    const u = await makeUser("strippng");
    const { dirty, clean } = await cameraPng(7, 5);
    const { entity, served } = await uploadAndFetch(u, dirty, "shot.png", "image/png");
    expect(served).toEqual(clean);
    expectClean(served);
    expect(entity.meta.original).toMatchObject({ width: 7, height: 5 });
    expect(sniff(served)).toMatchObject({ mime: "image/png", width: 7, height: 5 });
    // A PNG eXIf with an orientation: the pixels are turned and no eXIf is left.
    const rotated = await cameraPng(7, 5, 6);
    const r = await uploadAndFetch(u, rotated.dirty, "rot.png", "image/png");
    expectClean(r.served);
    expect(containsText(r.served, "eXIf")).toBe(false);
    expect(sniff(r.served)).toMatchObject({ mime: "image/png", width: 5, height: 7 });
  });

  // The fixture's VP8X picture is no image a decoder draws, so this checks the stripper itself (what avatars, headers
  // and an instance without the Images binding store) rather than an upload, which the binding would refuse.
  it("WebP: EXIF, XMP and unknown chunks are gone, VP8X flags and the RIFF size match what is left", async () => {
    for (const orientation of [undefined, 6]) {
      const { dirty, clean } = cameraWebp(orientation);
      const served = stripMetadata(dirty, "image/webp");
      expect(served).toEqual(clean);
      expectClean(served);
      const riffSize = served[4] | (served[5] << 8) | (served[6] << 16) | (served[7] << 24);
      expect(riffSize).toBe(served.length - 8);
      expect(served[20] & 0x04).toBe(0); // XMP flag
      expect(served[20] & 0x08).toBe(orientation ? 0x08 : 0); // EXIF flag only with the minimal EXIF
      expect(sniff(served)).toMatchObject({ mime: "image/webp", width: 10, height: 20 });
    }
  });

  it("GIF: comment and XMP extensions are gone, frames and looping stay", async () => {
    const u = await makeUser("stripgif");
    const { dirty, clean } = cameraGif();
    const { served } = await uploadAndFetch(u, dirty, "anim.gif", "image/gif");
    expect(served).toEqual(clean);
    expectClean(served);
    expect(sniff(served)).toMatchObject({ width: 3, height: 2, frames: 2 });
  });

  it("avatars and headers are stripped too", async () => {
    const u = await makeUser("stripavatar");
    const f = new FormData();
    f.append("avatar", new File([cameraJpeg(20, 20).dirty], "me.jpg", { type: "image/jpeg" }));
    f.append("header", new File([(await cameraPng(30, 10)).dirty], "h.png", { type: "image/png" }));
    const res = await u.api.patch("/api/v1/accounts/update_credentials", f, "multipart");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const url of [res.body.avatar, res.body.header] as string[]) {
      expect(url.startsWith(ORIGIN)).toBe(true);
      const served = await bytesOf(await SELF.fetch(url));
      expectClean(served);
      expect(sniff(served)?.width).toBeGreaterThan(0);
    }
  });

  it("a segment that overruns the file: the stripper ends the file there, and the upload refuses it as incomplete", async () => {
    const u = await makeUser("stripbroken");
    const base = jpeg(8, 8);
    const cut = base.subarray(0, base.length - 2); // the picture without its EOI
    const broken = concat(cut, [0xff, 0xfe, 0xff, 0xf0], ascii("SECRET comment that claims 65,520 bytes"));
    expect(stripMetadata(broken, "image/jpeg")).toEqual(cut);
    const res = await u.api.post("/api/v2/media", form(broken, "x.jpg", "image/jpeg"), "multipart");
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/incomplete/);
  });
});

describe("stripMetadata on generated inputs", () => {
  const blob = fc.uint8Array({ minLength: 0, maxLength: 300 });
  const appMarker = fc.constantFrom(0xe0, 0xe1, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xef, 0xfe);

  it("JPEG: any number of APPn/COM segments with any payload (0xFF bytes included) leave exactly the picture", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(appMarker, blob), { maxLength: 8 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        blob,
        (segs, w, h, tail) => {
          const base = jpeg(w, h);
          const extra = segs
            // APP0 JFIF would be kept by design; the generated APP0 payloads must not spell it.
            .map(([m, p]) => segment(m, m === 0xe0 ? concat(ascii("NOTJ"), p) : p));
          const dirty = concat(base.subarray(0, 20), ...extra, base.subarray(20), tail);
          const out = stripMetadata(dirty, "image/jpeg");
          expect(out).toEqual(base);
          expect(sniff(out)).toMatchObject({ width: w, height: h });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("PNG: any ancillary chunk outside the allow-list is dropped, whatever its name and content", async () => {
    const base = await png(3, 3);
    const lower = "abcdefghijklmnopqrstuvwxyz";
    const name = fc
      .tuple(
        fc.constantFrom(...lower),
        fc.constantFrom(...`${lower}ABCXYZ`),
        fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        fc.constantFrom(...`${lower}ABCXYZ`),
      )
      .map((c) => c.join(""))
      .filter(
        (n) => !["tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCv", "cLLi", "bKGD", "hIST", "pHYs", "sPLT", "acTL", "fcTL", "fdAT"].includes(n),
      );
    fc.assert(
      fc.property(fc.array(fc.tuple(name, blob), { maxLength: 6 }), blob, (chunks, tail) => {
        const dirty = concat(base.subarray(0, 33), ...chunks.map(([n, p]) => pngChunk(n, p)), base.subarray(33), tail);
        expect(stripMetadata(dirty, "image/png")).toEqual(base);
      }),
      { numRuns: 200 },
    );
  });

  it("WebP: any chunk outside the allow-list is dropped and the RIFF size is exact", () => {
    const image = riffChunk("VP8L", VP8L);
    const fourcc = fc
      .string({ minLength: 4, maxLength: 4 })
      .filter((s) => /^[\x20-\x7e]{4}$/.test(s) && !["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"].includes(s));
    fc.assert(
      fc.property(fc.array(fc.tuple(fourcc, blob), { maxLength: 6 }), (chunks) => {
        const dirty = riff(image, ...chunks.map(([n, p]) => riffChunk(n, p)));
        expect(stripMetadata(dirty, "image/webp")).toEqual(riff(image));
      }),
      { numRuns: 200 },
    );
  });

  it("never throws and never grows a file by more than the minimal EXIF, whatever the bytes", async () => {
    const seeds = [jpeg(8, 8), await png(2, 2), riff(riffChunk("VP8L", VP8L)), gif(2, 2, 1)];
    const mimes = ["image/jpeg", "image/png", "image/webp", "image/gif"];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }),
        fc.nat(),
        (k, flips, cut) => {
          const b = Uint8Array.from(seeds[k]);
          for (const [at, v] of flips) b[at % b.length] = v;
          const input = b.subarray(0, Math.max(1, b.length - (cut % 8)));
          const out = stripMetadata(input, mimes[k]);
          expect(out.length).toBeLessThanOrEqual(input.length + 48);
        },
      ),
      { numRuns: 500 },
    );
  });
});
