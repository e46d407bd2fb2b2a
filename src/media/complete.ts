// Whether an image file is whole: its structure runs to its own end marker. A truncated upload is refused before
// anything decodes it (a decoder would draw half a picture, or fail in ways that say nothing). Reads structure only,
// like sniff.ts, and never throws: a reader past the end sees zeros (bytes.ts).
import { ascii, gifSubBlocksEnd, u16be, u32be, u32le, u8 } from "./bytes";

/** True when `b` (of type `mime`, as sniff.ts named it) reaches its end marker with every part inside the file. */
export function isComplete(b: Uint8Array, mime: string): boolean {
  switch (mime) {
    case "image/png":
      return pngComplete(b);
    case "image/jpeg":
      return jpegComplete(b);
    case "image/gif":
      return gifComplete(b);
    case "image/webp":
      return ascii(b, 0, 4) === "RIFF" && 8 + u32le(b, 4) <= b.length && chunksFit(b, 12, 8 + u32le(b, 4));
    case "image/avif":
    case "image/heic":
      return isoBoxesFit(b);
    default:
      return true;
  }
}

function pngComplete(b: Uint8Array): boolean {
  let o = 8;
  while (o + 12 <= b.length) {
    const len = u32be(b, o);
    if (o + 12 + len > b.length) return false;
    if (ascii(b, o + 4, 4) === "IEND") return true;
    o += 12 + len;
  }
  return false;
}

/** A JPEG is whole when, after its first scan, an end-of-image marker (FFD9) is found. */
function jpegComplete(b: Uint8Array): boolean {
  let o = 2;
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) return false;
    const m = u8(b, o + 1);
    if (m === 0xff) {
      o++;
      continue;
    }
    if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      o += 2;
      continue;
    }
    if (m === 0xd9) return false; // an end before any scan
    const len = u16be(b, o + 2);
    if (len < 2 || o + 2 + len > b.length) return false;
    if (m === 0xda) {
      for (let p = b.length - 2; p >= o + 2 + len; p--) if (b[p] === 0xff && b[p + 1] === 0xd9) return true;
      return false;
    }
    o += 2 + len;
  }
  return false;
}

function gifComplete(b: Uint8Array): boolean {
  let o = 13;
  const flags = u8(b, 10);
  if (flags & 0x80) o += 3 * (1 << ((flags & 7) + 1));
  for (let i = 0; i < 200_000 && o < b.length; i++) {
    const block = u8(b, o);
    if (block === 0x3b) return true;
    if (block === 0x21) o = gifSubBlocksEnd(b, o + 2);
    else if (block === 0x2c) {
      if (o + 10 > b.length) return false;
      const packed = u8(b, o + 9);
      o += 10;
      if (packed & 0x80) o += 3 * (1 << ((packed & 7) + 1));
      o = gifSubBlocksEnd(b, o + 1);
    } else return false;
    if (o < 0) return false;
  }
  return false;
}

/** RIFF chunks from `o` to `end`, each inside it. */
function chunksFit(b: Uint8Array, o: number, end: number): boolean {
  let n = 0;
  while (o + 8 <= end) {
    const len = u32le(b, o + 4);
    if (o + 8 + len > end) return false;
    o += 8 + len + (len & 1);
    n++;
  }
  return n > 0;
}

/** HEIF/AVIF: the top-level boxes tile the file, and the media data box (`mdat`) is inside it. */
function isoBoxesFit(b: Uint8Array): boolean {
  let o = 0;
  let mdat = false;
  while (o + 8 <= b.length) {
    let size = u32be(b, o);
    if (size === 1) size = u32be(b, o + 8) * 2 ** 32 + u32be(b, o + 12);
    else if (size === 0) size = b.length - o;
    if (size < 8 || o + size > b.length) return false;
    if (ascii(b, o + 4, 4) === "mdat") mdat = true;
    o += size;
  }
  return mdat && o === b.length;
}
