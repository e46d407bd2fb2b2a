// RGBA pixels of a tiny PNG, for the blurhash (media/process-image.ts). Why a PNG decoder here: the Images binding
// can answer raw `rgba` on Cloudflare, but miniflare's local binding (sharp) refuses raw output ("not supported in
// local mode"), so the tests and `npm run dev` could not run that path. A PNG of at most 64×64 is the one format
// both give, and it inflates with the platform's DecompressionStream in well under a millisecond. Only what an
// encoder writes for such a rendition is read: 8- or 16-bit grey, grey+alpha, RGB, RGBA or palette, not interlaced.
import { ascii, u32be, u8 } from "./bytes";

export interface Pixels {
  width: number;
  height: number;
  /** width × height × 4 bytes, RGBA. */
  data: Uint8ClampedArray;
}

/** Largest side decoded: the rendition asked for is 32 pixels at most. */
const MAX_SIDE = 64;
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The pixels of `png`, or null when it is not a small PNG of a kind read here. */
export async function decodeSmallPng(png: Uint8Array): Promise<Pixels | null> {
  if (ascii(png, 1, 3) !== "PNG" || ascii(png, 12, 4) !== "IHDR") return null;
  const width = u32be(png, 16);
  const height = u32be(png, 20);
  const depth = u8(png, 24);
  const colour = u8(png, 25);
  const channels = CHANNELS[colour];
  if (!width || !height || width > MAX_SIDE || height > MAX_SIDE || !channels || u8(png, 28) !== 0) return null;
  if (depth !== 8 && depth !== 16) return null;
  let palette: Uint8Array | null = null;
  let alpha: Uint8Array | null = null;
  const idat: Uint8Array[] = [];
  for (let o = 8; o + 12 <= png.length; ) {
    const len = u32be(png, o);
    const type = ascii(png, o + 4, 4);
    const body = png.subarray(o + 8, o + 8 + len);
    if (type === "PLTE") palette = body;
    if (type === "tRNS") alpha = body;
    if (type === "IDAT") idat.push(body);
    if (type === "IEND") break;
    o += 12 + len;
  }
  let raw: Uint8Array;
  try {
    raw = await inflate(new Uint8Array(await new Blob(idat).arrayBuffer()));
  } catch {
    return null;
  }
  const bpp = (channels * depth) / 8;
  const stride = width * bpp;
  if (raw.length < height * (stride + 1)) return null;
  const rows = unfilter(raw, height, stride, bpp);
  const data = new Uint8ClampedArray(width * height * 4);
  const sample = (row: Uint8Array, i: number) => u8(row, depth === 16 ? i * 2 : i); // 16-bit: the high byte
  for (let y = 0; y < height; y++) {
    const row = rows[y] ?? new Uint8Array(stride);
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      const s = x * channels;
      if (colour === 3) {
        const idx = u8(row, x);
        data[p] = palette ? u8(palette, idx * 3) : 0;
        data[p + 1] = palette ? u8(palette, idx * 3 + 1) : 0;
        data[p + 2] = palette ? u8(palette, idx * 3 + 2) : 0;
        data[p + 3] = alpha && idx < alpha.length ? u8(alpha, idx) : 255;
      } else if (colour === 0 || colour === 4) {
        const g = sample(row, s);
        data[p] = data[p + 1] = data[p + 2] = g;
        data[p + 3] = colour === 4 ? sample(row, s + 1) : 255;
      } else {
        data[p] = sample(row, s);
        data[p + 1] = sample(row, s + 1);
        data[p + 2] = sample(row, s + 2);
        data[p + 3] = colour === 6 ? sample(row, s + 3) : 255;
      }
    }
  }
  return { width, height, data };
}

/** Undoes PNG's per-row filters (None, Sub, Up, Average, Paeth). */
function unfilter(raw: Uint8Array, height: number, stride: number, bpp: number): Uint8Array[] {
  const rows: Uint8Array[] = [];
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const at = y * (stride + 1);
    const filter = u8(raw, at);
    const row = raw.slice(at + 1, at + 1 + stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? u8(row, i - bpp) : 0;
      const b = u8(prev, i);
      const c = i >= bpp ? u8(prev, i - bpp) : 0;
      const x = u8(row, i);
      if (filter === 1) row[i] = x + a;
      else if (filter === 2) row[i] = x + b;
      else if (filter === 3) row[i] = x + ((a + b) >> 1);
      else if (filter === 4) {
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        row[i] = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
    }
    rows.push(row);
    prev = row;
  }
  return rows;
}
