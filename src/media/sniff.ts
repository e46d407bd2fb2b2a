// Media type detection from magic bytes, and dimensions read from container headers only. Nothing here decodes
// pixels or samples: the caps on pixels and frames (security F3) must be decided before anything expands the file.
// The declared Content-Type and filename are never consulted (F1, F2).
import { ascii, gifSubBlocksEnd, tiffOrientation, u16be, u16le, u24le, u32be, u32le, u8 } from "./bytes";

export type MediaKind = "image" | "video" | "audio";

export interface Sniffed {
  mime: string;
  ext: string;
  kind: MediaKind;
  width?: number;
  height?: number;
  /** Frames of an animated image (GIF image descriptors, APNG acTL, WebP ANMF). */
  frames?: number;
  /** Seconds, when the container states it. */
  duration?: number;
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((x, i) => b[at + i] === x);

/** The media type of `b` and what its headers say, or null when it is not a supported format (HTML, SVG, ...). */
export function sniff(b: Uint8Array): Sniffed | null {
  if (b.length < 12) return null;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return png(b);
  if (startsWith(b, [0xff, 0xd8, 0xff])) return jpeg(b);
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return gif(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return webp(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WAVE") return { mime: "audio/wav", ext: "wav", kind: "audio" };
  if (ascii(b, 4, 4) === "ftyp") return isoBmff(b);
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return matroska(b);
  if (ascii(b, 0, 4) === "OggS") return ogg(b);
  if (ascii(b, 0, 4) === "fLaC") return { mime: "audio/flac", ext: "flac", kind: "audio" };
  if (ascii(b, 0, 3) === "ID3" || mpegAudioFrame(b, 0)) return { mime: "audio/mpeg", ext: "mp3", kind: "audio" };
  return null;
}

function png(b: Uint8Array): Sniffed | null {
  if (ascii(b, 12, 4) !== "IHDR" || b.length < 24) return null;
  const out: Sniffed = { mime: "image/png", ext: "png", kind: "image", width: u32be(b, 16), height: u32be(b, 20) };
  // APNG: acTL comes before the first IDAT; walk chunk headers only.
  let o = 8;
  for (let i = 0; i < 64 && o + 8 <= b.length; i++) {
    const len = u32be(b, o);
    const type = ascii(b, o + 4, 4);
    if (type === "acTL" && o + 12 <= b.length) out.frames = u32be(b, o + 8);
    if (type === "IDAT" || type === "IEND") break;
    o += 12 + len;
  }
  return out;
}

// SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** EXIF Orientation from an APP1 payload starting at `o`; 1 when absent (read as strip-metadata.ts reads it). */
const exifOrientation = (b: Uint8Array, o: number, end: number): number => (ascii(b, o, 6) === "Exif\0\0" ? tiffOrientation(b, o + 6, end) : 1);

function jpeg(b: Uint8Array): Sniffed | null {
  let o = 2;
  let orientation = 1;
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) return null;
    const marker = u8(b, o + 1); // in range: o + 4 <= b.length
    if (marker === 0xff) {
      o++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan before any frame header
    const len = u16be(b, o + 2);
    if (len < 2) return null;
    if (marker === 0xe1 && orientation === 1) orientation = exifOrientation(b, o + 4, Math.min(b.length, o + 2 + len));
    if (isSof(marker)) {
      if (o + 9 > b.length) return null;
      const h = u16be(b, o + 5);
      const w = u16be(b, o + 7);
      // Orientations 5–8 turn the picture a quarter: viewers (and Mastodon's meta) report it upright.
      const turned = orientation >= 5 && orientation <= 8;
      return { mime: "image/jpeg", ext: "jpg", kind: "image", width: turned ? h : w, height: turned ? w : h };
    }
    o += 2 + len;
  }
  return null;
}

/** Frames past this are not counted further: the caller's cap is far below it. */
const GIF_FRAME_SCAN_LIMIT = 100_000;

function gif(b: Uint8Array): Sniffed | null {
  if (b.length < 13) return null;
  const out: Sniffed = { mime: "image/gif", ext: "gif", kind: "image", width: u16le(b, 6), height: u16le(b, 8), frames: 0 };
  let o = 13;
  const flags = u8(b, 10);
  if (flags & 0x80) o += 3 * (1 << ((flags & 7) + 1));
  let frames = 0;
  let maxW = 0;
  let maxH = 0;
  while (o < b.length && frames < GIF_FRAME_SCAN_LIMIT) {
    const block = u8(b, o); // in range: o < b.length
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      o = gifSubBlocksEnd(b, o + 2);
    } else if (block === 0x2c) {
      if (o + 10 > b.length) break;
      frames++;
      // A frame may be larger than the logical screen; decoders allocate for it, so it counts for the pixel cap.
      maxW = Math.max(maxW, u16le(b, o + 5));
      maxH = Math.max(maxH, u16le(b, o + 7));
      const packed = u8(b, o + 9); // in range: o + 10 <= b.length
      o += 10;
      if (packed & 0x80) o += 3 * (1 << ((packed & 7) + 1));
      o = gifSubBlocksEnd(b, o + 1); // after the LZW minimum code size
    } else break;
    if (o < 0) break;
  }
  out.frames = frames;
  out.width = Math.max(out.width ?? 0, maxW);
  out.height = Math.max(out.height ?? 0, maxH);
  return out;
}

function webp(b: Uint8Array): Sniffed | null {
  const chunk = ascii(b, 12, 4);
  const d = 20;
  const out: Sniffed = { mime: "image/webp", ext: "webp", kind: "image" };
  if (chunk === "VP8 " && b.length >= d + 10) {
    if (!startsWith(b, [0x9d, 0x01, 0x2a], d + 3)) return null;
    out.width = u16le(b, d + 6) & 0x3fff;
    out.height = u16le(b, d + 8) & 0x3fff;
  } else if (chunk === "VP8L" && b.length >= d + 5) {
    if (b[d] !== 0x2f) return null;
    const bits = u32le(b, d + 1);
    out.width = (bits & 0x3fff) + 1;
    out.height = ((bits >>> 14) & 0x3fff) + 1;
  } else if (chunk === "VP8X" && b.length >= d + 10) {
    out.width = u24le(b, d + 4) + 1;
    out.height = u24le(b, d + 7) + 1;
    if (u8(b, d) & 0x02) out.frames = countWebpFrames(b);
  } else return null;
  return out;
}

function countWebpFrames(b: Uint8Array): number {
  let o = 12;
  let n = 0;
  while (o + 8 <= b.length && n < GIF_FRAME_SCAN_LIMIT) {
    if (ascii(b, o, 4) === "ANMF") n++;
    o += 8 + u32le(b, o + 4) + (u32le(b, o + 4) & 1);
  }
  return n;
}

// ---- ISO base media (MP4, MOV, M4A, 3GP) ----

interface Box {
  type: string;
  start: number; // payload start
  end: number;
}

function* boxes(b: Uint8Array, from: number, to: number): Generator<Box> {
  let o = from;
  for (let i = 0; i < 10_000 && o + 8 <= to; i++) {
    let size = u32be(b, o);
    const type = ascii(b, o + 4, 4);
    let header = 8;
    if (size === 1) {
      if (o + 16 > to) return;
      const hi = u32be(b, o + 8);
      size = hi * 2 ** 32 + u32be(b, o + 12);
      header = 16;
    } else if (size === 0) size = to - o;
    if (size < header) return;
    yield { type, start: o + header, end: Math.min(o + size, to) };
    o += size;
  }
}

const child = (b: Uint8Array, box: Box, type: string) => {
  for (const x of boxes(b, box.start, box.end)) if (x.type === type) return x;
  return null;
};

function isoBmff(b: Uint8Array): Sniffed | null {
  const brand = ascii(b, 8, 4);
  let hasVideo = false;
  let hasAudio = false;
  let width = 0;
  let height = 0;
  let duration: number | undefined;
  for (const top of boxes(b, 0, b.length)) {
    if (top.type !== "moov") continue;
    const mvhd = child(b, top, "mvhd");
    if (mvhd) {
      const v1 = b[mvhd.start] === 1;
      const scale = u32be(b, mvhd.start + (v1 ? 20 : 12));
      const dur = v1 ? u32be(b, mvhd.start + 24) * 2 ** 32 + u32be(b, mvhd.start + 28) : u32be(b, mvhd.start + 16);
      if (scale > 0) duration = dur / scale;
    }
    for (const trak of boxes(b, top.start, top.end)) {
      if (trak.type !== "trak") continue;
      const mdia = child(b, trak, "mdia");
      const hdlr = mdia && child(b, mdia, "hdlr");
      const handler = hdlr ? ascii(b, hdlr.start + 8, 4) : "";
      if (handler === "soun") hasAudio = true;
      if (handler === "vide") {
        hasVideo = true;
        const tkhd = child(b, trak, "tkhd");
        if (tkhd && tkhd.end - tkhd.start >= 84) {
          const at = tkhd.end - 8; // width and height (16.16 fixed) close every tkhd version
          width = Math.max(width, u32be(b, at) >>> 16);
          height = Math.max(height, u32be(b, at + 4) >>> 16);
        }
      }
    }
  }
  const audioBrand = brand === "M4A " || brand === "M4B " || brand === "F4A ";
  if (brand === "avif" || brand === "avis" || brand === "heic" || brand === "heix" || brand === "mif1" || brand === "msf1") {
    return null; // still-image HEIF/AVIF: no dimension reader here, so refused rather than trusted
  }
  if ((audioBrand || hasAudio) && !hasVideo) return { mime: "audio/mp4", ext: "m4a", kind: "audio", duration };
  const qt = brand === "qt  ";
  const out: Sniffed = { mime: qt ? "video/quicktime" : "video/mp4", ext: qt ? "mov" : "mp4", kind: "video", duration };
  if (width && height) {
    out.width = width;
    out.height = height;
  }
  return out;
}

// ---- Matroska / WebM (EBML) ----

function vint(b: Uint8Array, o: number, keepMarker: boolean): { value: number; len: number; unknown: boolean } | null {
  const first = b[o];
  if (first === undefined || first === 0) return null;
  let len = 1;
  while (!(first & (0x80 >> (len - 1)))) len++;
  if (len > 8 || o + len > b.length) return null;
  let value = keepMarker ? first : first & (0xff >> len);
  let allOnes = value === 0xff >> len;
  for (let i = 1; i < len; i++) {
    const byte = u8(b, o + i); // in range: o + len <= b.length
    value = value * 256 + byte;
    if (byte !== 0xff) allOnes = false;
  }
  return { value, len, unknown: !keepMarker && allOnes };
}

const EBML_MASTERS = new Set([0x18538067, 0x1654ae6b, 0xae, 0xe0, 0x1549a966]); // Segment, Tracks, TrackEntry, Video, Info

function matroska(b: Uint8Array): Sniffed | null {
  let docType = "";
  let width = 0;
  let height = 0;
  let hasVideo = false;
  let hasAudio = false;
  let steps = 0;
  const walk = (from: number, to: number) => {
    let o = from;
    while (o < to && steps++ < 20_000) {
      const id = vint(b, o, true);
      if (!id) return;
      const size = vint(b, o + id.len, false);
      if (!size) return;
      const start = o + id.len + size.len;
      const end = size.unknown ? to : Math.min(to, start + size.value);
      if (id.value === 0x1a45dfa3) walk(start, end);
      else if (id.value === 0x4282) docType = ascii(b, start, Math.min(end - start, 16)).replace(/\0+$/, "");
      else if (id.value === 0x83) {
        const t = b[start];
        if (t === 1) hasVideo = true;
        if (t === 2) hasAudio = true;
      } else if (id.value === 0xb0) width = Math.max(width, readUint(b, start, end));
      else if (id.value === 0xba) height = Math.max(height, readUint(b, start, end));
      else if (id.value === 0x1f43b675)
        return; // first Cluster: the headers are behind us
      else if (EBML_MASTERS.has(id.value)) walk(start, end);
      if (size.unknown) return;
      o = end;
    }
  };
  walk(0, b.length);
  if (docType !== "webm" && docType !== "matroska") return null;
  if (hasAudio && !hasVideo) return { mime: "audio/webm", ext: "weba", kind: "audio" };
  const out: Sniffed = { mime: "video/webm", ext: "webm", kind: "video" };
  if (width && height) {
    out.width = width;
    out.height = height;
  }
  return out;
}

function readUint(b: Uint8Array, start: number, end: number): number {
  let v = 0;
  for (let i = start; i < end && i < start + 6; i++) v = v * 256 + u8(b, i); // end <= b.length
  return v;
}

// ---- Ogg, MPEG audio ----

function ogg(b: Uint8Array): Sniffed {
  // The first page holds the first packet of the first logical stream: the codec's identification header.
  const segments = b[26] ?? 0;
  const body = 27 + segments;
  if (ascii(b, body, 7) === "\x80theora") return { mime: "video/ogg", ext: "ogv", kind: "video" };
  return { mime: "audio/ogg", ext: "ogg", kind: "audio" };
}

/** An MPEG-1/2 layer III frame header at `o` (no ID3 tag). */
function mpegAudioFrame(b: Uint8Array, o: number): boolean {
  const b1 = u8(b, o + 1);
  const b2 = u8(b, o + 2);
  if (b[o] !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3;
  const bitrate = b2 >> 4;
  const rate = (b2 >> 2) & 3;
  return version !== 1 && layer === 1 && bitrate !== 0 && bitrate !== 15 && rate !== 3;
}
