// Small real media files built byte by byte for the media tests (no fixtures on disk).
import { crc32 } from "../../src/lib/text/crc32";

export function concat(...parts: (Uint8Array | number[])[]): Uint8Array {
  const arrs = parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(arrs.reduce((n, a) => n + a.length, 0));
  let o = 0;
  for (const a of arrs) {
    out.set(a, o);
    o += a.length;
  }
  return out;
}

const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const ascii = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const td = concat(ascii(type), data);
  return concat(be32(data.length), td, be32(crc32(td)));
}

async function deflate(raw: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A valid RGB PNG of one colour. */
export async function png(w: number, h: number, rgb: [number, number, number] = [0x33, 0x66, 0x99]): Promise<Uint8Array> {
  const raw = new Uint8Array(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(rgb, y * (1 + 3 * w) + 1 + 3 * x);
  return pngFrom(w, h, await deflate(raw));
}

/** A PNG whose header claims `w`×`h` with a tiny (wrong) IDAT: what a decompression bomb looks like to a sniffer. */
export function pngHeaderOnly(w: number, h: number, padding = 0): Uint8Array {
  const body = pngFrom(w, h, new Uint8Array([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
  return padding ? concat(body, new Uint8Array(padding)) : body;
}

function pngFrom(w: number, h: number, idat: Uint8Array): Uint8Array {
  const ihdr = Uint8Array.from([...be32(w), ...be32(h), 8, 2, 0, 0, 0]);
  return concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pngChunk("IHDR", ihdr), pngChunk("IDAT", idat), pngChunk("IEND", new Uint8Array()));
}

/**
 * A valid baseline greyscale JPEG of mid grey: every 8×8 block is DC difference 0 then end-of-block, coded with
 * one-symbol Huffman tables (code "0"), so the scan is two zero bits per block.
 */
export function jpeg(w: number, h: number): Uint8Array {
  const dqt = [0xff, 0xdb, ...be16(67), 0, ...new Array(64).fill(1)];
  const sof = [0xff, 0xc0, ...be16(11), 8, ...be16(h), ...be16(w), 1, 1, 0x11, 0];
  const table = (cls: number, symbol: number) => [0xff, 0xc4, ...be16(3 + 16 + 1), cls, 1, ...new Array(15).fill(0), symbol];
  const sos = [0xff, 0xda, ...be16(8), 1, 1, 0x00, 0, 63, 0];
  const blocks = Math.ceil(w / 8) * Math.ceil(h / 8);
  const bits = blocks * 2;
  const scan = new Uint8Array(Math.ceil(bits / 8));
  const padBits = scan.length * 8 - bits;
  if (padBits) scan[scan.length - 1] = (1 << padBits) - 1; // pad the last byte with 1s
  const app0 = [0xff, 0xe0, ...be16(16), ...ascii("JFIF"), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
  return concat([0xff, 0xd8], app0, dqt, sof, table(0x00, 0), table(0x10, 0), sos, scan, [0xff, 0xd9]);
}

/** A valid GIF of `frames` frames, `w`×`h`, two-colour palette, all pixels colour 0. */
export function gif(w: number, h: number, frames = 1): Uint8Array {
  const out: number[] = [...ascii("GIF89a"), ...le16(w), ...le16(h), 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  if (frames > 1) out.push(0x21, 0xff, 11, ...ascii("NETSCAPE2.0"), 3, 1, 0, 0, 0);
  const lzw = gifPixels(w * h);
  for (let i = 0; i < frames; i++) {
    out.push(0x21, 0xf9, 4, 0, 10, 0, 0, 0); // graphic control: 0.1 s
    out.push(0x2c, 0, 0, 0, 0, ...le16(w), ...le16(h), 0, 2);
    for (let o = 0; o < lzw.length; o += 255) {
      const part = lzw.slice(o, o + 255);
      out.push(part.length, ...part);
    }
    out.push(0);
  }
  out.push(0x3b);
  return Uint8Array.from(out);
}

/** LZW (min code size 2) for n pixels of colour 0, clearing every two codes so the code width stays 3 bits. */
function gifPixels(n: number): number[] {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) codes.push(4);
    codes.push(0);
  }
  codes.push(5);
  const bytes: number[] = [];
  let acc = 0;
  let nbits = 0;
  for (const c of codes) {
    acc |= c << nbits;
    nbits += 3;
    while (nbits >= 8) {
      bytes.push(acc & 255);
      acc >>>= 8;
      nbits -= 8;
    }
  }
  if (nbits) bytes.push(acc & 255);
  return bytes;
}

function box(type: string, ...payload: (Uint8Array | number[])[]): Uint8Array {
  const body = concat(...payload);
  return concat(be32(body.length + 8), ascii(type), body);
}

/** An MP4 skeleton: ftyp and a moov with one video track (`w`×`h`) and a duration; `moovLast` puts mdat first. */
export function mp4(w: number, h: number, seconds: number, opts: { moovLast?: boolean; mdatBytes?: number; audioOnly?: boolean } = {}): Uint8Array {
  const ftyp = box("ftyp", ascii(opts.audioOnly ? "M4A " : "isom"), be32(512), ascii("isomiso2mp41"));
  const mvhd = box("mvhd", [0, 0, 0, 0], be32(0), be32(0), be32(1000), be32(Math.round(seconds * 1000)), new Uint8Array(80));
  const tkhd = box("tkhd", [0, 0, 0, 3], new Uint8Array(72), be32(w << 16), be32(h << 16));
  const hdlr = box("hdlr", [0, 0, 0, 0], be32(0), ascii(opts.audioOnly ? "soun" : "vide"), new Uint8Array(12), [0]);
  const moov = box("moov", mvhd, box("trak", tkhd, box("mdia", hdlr)));
  const mdat = box("mdat", new Uint8Array(opts.mdatBytes ?? 64));
  return opts.moovLast ? concat(ftyp, mdat, moov) : concat(ftyp, moov, mdat);
}

/** Status of a GET through the Worker; the body is always read so no R2 stream outlives the test. */
export async function statusOf(url: string): Promise<number> {
  const { SELF } = await import("cloudflare:test");
  const res = await SELF.fetch(url);
  await res.arrayBuffer();
  return res.status;
}

export const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());
