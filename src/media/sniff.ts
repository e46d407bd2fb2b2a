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
  /** EXIF Orientation (1–8) of a JPEG; the stored width and height are the upright ones. */
  orientation?: number;
  /** Video frames per second, from the track's sample timing (MP4/MOV) or default frame duration (WebM). */
  fps?: number;
  /** Audio channels and sample rate, when the header states them. */
  channels?: number;
  sampleRate?: number;
  /** Codec names as the container spells them (avc1, V_VP9, mp4a, A_OPUS, vorbis, ...). */
  videoCodec?: string;
  audioCodec?: string;
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((x, i) => b[at + i] === x);

/**
 * The media type of `b` and what its headers say, or null when it is not a supported format (HTML, SVG, ...). `total`
 * is the whole file's size when `b` is only its head (MP3 duration of a constant bitrate is reckoned from it).
 */
export function sniff(b: Uint8Array, total = b.length): Sniffed | null {
  if (b.length < 12) return null;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return png(b);
  if (startsWith(b, [0xff, 0xd8, 0xff])) return jpeg(b);
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return gif(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return webp(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WAVE") return wav(b);
  if (ascii(b, 4, 4) === "ftyp") return isoBmff(b);
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return matroska(b);
  if (ascii(b, 0, 4) === "OggS") return ogg(b);
  if (ascii(b, 0, 4) === "fLaC") return flac(b);
  if (ascii(b, 0, 3) === "ID3" || mpegAudioFrame(b, 0)) return mp3(b, total);
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
      return { mime: "image/jpeg", ext: "jpg", kind: "image", width: turned ? h : w, height: turned ? w : h, orientation };
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

/** Brands of still-image HEIF (HEVC inside) and AVIF (AV1 inside). */
const HEIC_BRANDS = new Set(["heic", "heix", "heim", "heis", "hevc", "hevx"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

function isoBmff(b: Uint8Array): Sniffed | null {
  const brand = ascii(b, 8, 4);
  const ftypEnd = Math.min(b.length, u32be(b, 0));
  const brands = new Set([brand]);
  for (let o = 16; o + 4 <= ftypEnd && brands.size < 64; o += 4) brands.add(ascii(b, o, 4));
  if ([...brands].some((x) => HEIC_BRANDS.has(x) || AVIF_BRANDS.has(x)) || brand === "mif1" || brand === "msf1") return heif(b, brands);
  let hasVideo = false;
  let hasAudio = false;
  let width = 0;
  let height = 0;
  let duration: number | undefined;
  const out: Partial<Sniffed> = {};
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
      const stbl = mdia && child(b, mdia, "minf") && findPath(b, mdia, ["minf", "stbl"]);
      const stsd = stbl && child(b, stbl, "stsd");
      // The first sample entry (after version/flags and the entry count) names the codec.
      const entry = stsd && stsd.start + 16 <= stsd.end ? { type: ascii(b, stsd.start + 12, 4), at: stsd.start + 16 } : null;
      if (handler === "soun") {
        hasAudio = true;
        if (entry && !out.audioCodec) {
          out.audioCodec = entry.type.trim();
          // AudioSampleEntry: 8 bytes of SampleEntry, 8 reserved, channel count, sample size, 4 reserved, rate (16.16).
          out.channels = u16be(b, entry.at + 16);
          out.sampleRate = u32be(b, entry.at + 24) >>> 16;
        }
      }
      if (handler === "vide") {
        hasVideo = true;
        const tkhd = child(b, trak, "tkhd");
        if (tkhd && tkhd.end - tkhd.start >= 84) {
          const at = tkhd.end - 8; // width and height (16.16 fixed) close every tkhd version
          width = Math.max(width, u32be(b, at) >>> 16);
          height = Math.max(height, u32be(b, at + 4) >>> 16);
        }
        if (entry && !out.videoCodec) out.videoCodec = entry.type.trim();
        const mdhd = mdia && child(b, mdia, "mdhd");
        const stts = stbl && child(b, stbl, "stts");
        if (mdhd && stts && out.fps === undefined) out.fps = frameRate(b, mdhd, stts);
      }
    }
  }
  const audioBrand = brand === "M4A " || brand === "M4B " || brand === "F4A ";
  if ((audioBrand || hasAudio) && !hasVideo) return { ...out, mime: "audio/mp4", ext: "m4a", kind: "audio", duration };
  const qt = brand === "qt  ";
  const video: Sniffed = { ...out, mime: qt ? "video/quicktime" : "video/mp4", ext: qt ? "mov" : "mp4", kind: "video", duration };
  if (width && height) {
    video.width = width;
    video.height = height;
  }
  return video;
}

const findPath = (b: Uint8Array, from: Box, path: string[]): Box | null => {
  let at: Box | null = from;
  for (const type of path) {
    at = at && child(b, at, type);
    if (!at) return null;
  }
  return at;
};

/** Frames per second of a video track: its samples over their summed durations (stts) in the media's timescale (mdhd). */
function frameRate(b: Uint8Array, mdhd: Box, stts: Box): number | undefined {
  const v1 = b[mdhd.start] === 1;
  const scale = u32be(b, mdhd.start + (v1 ? 20 : 12));
  const n = u32be(b, stts.start + 4);
  let frames = 0;
  let ticks = 0;
  for (let i = 0; i < n && i < 100_000; i++) {
    const at = stts.start + 8 + i * 8;
    if (at + 8 > stts.end) break;
    frames += u32be(b, at);
    ticks += u32be(b, at) * u32be(b, at + 4);
  }
  if (!scale || !ticks || !frames) return undefined;
  return Math.round(((frames * scale) / ticks) * 100) / 100;
}

/**
 * HEIF and AVIF still images: the size is the largest image spatial extent (`ispe`) among the item properties
 * (meta/iprp/ipco), which is the primary image's (a grid's tiles and thumbnails are smaller); the largest also bounds
 * what a decoder allocates, which is what the pixel cap is for. A quarter turn (`irot`) swaps the upright sides.
 */
function heif(b: Uint8Array, brands: Set<string>): Sniffed | null {
  const avif = AVIF_BRANDS.has(ascii(b, 8, 4)) || (!HEIC_BRANDS.has(ascii(b, 8, 4)) && [...brands].some((x) => AVIF_BRANDS.has(x)));
  let width = 0;
  let height = 0;
  let turned = false;
  for (const top of boxes(b, 0, b.length)) {
    if (top.type !== "meta") continue;
    const meta = { type: "meta", start: top.start + 4, end: top.end }; // a full box: version and flags first
    const ipco = findPath(b, meta, ["iprp", "ipco"]);
    if (!ipco) break;
    for (const p of boxes(b, ipco.start, ipco.end)) {
      if (p.type === "ispe" && p.start + 12 <= p.end) {
        const w = u32be(b, p.start + 4);
        const h = u32be(b, p.start + 8);
        if (w * h > width * height) [width, height] = [w, h];
      }
      if (p.type === "irot" && p.start < p.end && (u8(b, p.start) & 1) === 1) turned = true;
    }
    break;
  }
  if (!width || !height) return null;
  const out: Sniffed = avif ? { mime: "image/avif", ext: "avif", kind: "image" } : { mime: "image/heic", ext: "heic", kind: "image" };
  out.width = turned ? height : width;
  out.height = turned ? width : height;
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

// Segment, Tracks, Video, Audio, Info; a TrackEntry (0xae) is walked on its own to keep its fields together.
const EBML_MASTERS = new Set([0x18538067, 0x1654ae6b, 0xe0, 0xe1, 0x1549a966]);

interface EbmlTrack {
  type?: number;
  codec?: string;
  defaultDuration?: number;
  channels?: number;
  rate?: number;
}

function matroska(b: Uint8Array): Sniffed | null {
  let docType = "";
  let width = 0;
  let height = 0;
  let timecodeScale = 1_000_000;
  let rawDuration: number | undefined;
  const tracks: EbmlTrack[] = [];
  let track: EbmlTrack | null = null;
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
      else if (id.value === 0xae) {
        track = {};
        tracks.push(track);
        walk(start, end);
        track = null;
      } else if (id.value === 0x83 && track) track.type = u8(b, start);
      else if (id.value === 0x86 && track) track.codec = ascii(b, start, Math.min(end - start, 32)).replace(/\0+$/, "");
      else if (id.value === 0x23e383 && track) track.defaultDuration = readUint(b, start, end);
      else if (id.value === 0x9f && track) track.channels = readUint(b, start, end);
      else if (id.value === 0xb5 && track) track.rate = readFloat(b, start, end);
      else if (id.value === 0xb0) width = Math.max(width, readUint(b, start, end));
      else if (id.value === 0xba) height = Math.max(height, readUint(b, start, end));
      else if (id.value === 0x2ad7b1) timecodeScale = readUint(b, start, end) || timecodeScale;
      else if (id.value === 0x4489) rawDuration = readFloat(b, start, end);
      else if (id.value === 0x1f43b675)
        return; // first Cluster: the headers are behind us
      else if (EBML_MASTERS.has(id.value)) walk(start, end);
      if (size.unknown) return;
      o = end;
    }
  };
  walk(0, b.length);
  if (docType !== "webm" && docType !== "matroska") return null;
  const video = tracks.find((t) => t.type === 1);
  const audio = tracks.find((t) => t.type === 2);
  const common: Partial<Sniffed> = {};
  if (rawDuration !== undefined && Number.isFinite(rawDuration) && rawDuration > 0) common.duration = (rawDuration * timecodeScale) / 1e9;
  if (audio) {
    if (audio.codec) common.audioCodec = audio.codec;
    if (audio.channels) common.channels = audio.channels;
    if (audio.rate) common.sampleRate = Math.round(audio.rate);
  }
  if (audio && !video) return { ...common, mime: "audio/webm", ext: "weba", kind: "audio" };
  const out: Sniffed = { ...common, mime: "video/webm", ext: "webm", kind: "video" };
  if (video?.codec) out.videoCodec = video.codec;
  if (video?.defaultDuration) out.fps = Math.round((1e9 / video.defaultDuration) * 100) / 100;
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

/** An EBML float: 4 or 8 bytes, big-endian. */
function readFloat(b: Uint8Array, start: number, end: number): number | undefined {
  const n = end - start;
  if ((n !== 4 && n !== 8) || end > b.length) return undefined;
  const dv = new DataView(b.buffer, b.byteOffset + start, n);
  return n === 4 ? dv.getFloat32(0) : dv.getFloat64(0);
}

// ---- WAV, FLAC ----

function wav(b: Uint8Array): Sniffed {
  const out: Sniffed = { mime: "audio/wav", ext: "wav", kind: "audio" };
  let byteRate = 0;
  for (let o = 12, i = 0; o + 8 <= b.length && i < 64; i++) {
    const type = ascii(b, o, 4);
    const len = u32le(b, o + 4);
    if (type === "fmt ") {
      out.channels = u16le(b, o + 10);
      out.sampleRate = u32le(b, o + 12);
      byteRate = u32le(b, o + 16);
    }
    if (type === "data") {
      if (byteRate) out.duration = len / byteRate;
      break;
    }
    o += 8 + len + (len & 1);
  }
  return out;
}

function flac(b: Uint8Array): Sniffed {
  const out: Sniffed = { mime: "audio/flac", ext: "flac", kind: "audio" };
  // STREAMINFO is the first metadata block: 20 bits of sample rate, 3 of channels - 1, 5 of bits - 1, 36 of samples.
  if ((u8(b, 4) & 0x7f) !== 0 || b.length < 26) return out;
  const rate = (u8(b, 18) << 12) | (u8(b, 19) << 4) | (u8(b, 20) >> 4);
  const samples = (u8(b, 21) & 0x0f) * 2 ** 32 + u32be(b, 22);
  out.channels = ((u8(b, 20) >> 1) & 7) + 1;
  if (rate) {
    out.sampleRate = rate;
    if (samples) out.duration = samples / rate;
  }
  return out;
}

// ---- Ogg, MPEG audio ----

function ogg(b: Uint8Array): Sniffed {
  // The first page holds the first packet of the first logical stream: the codec's identification header. The
  // duration needs the last page's granule position: the caller reads the file's tail (oggDuration).
  const segments = b[26] ?? 0;
  const body = 27 + segments;
  if (ascii(b, body, 7) === "\x80theora") return { mime: "video/ogg", ext: "ogv", kind: "video", videoCodec: "theora" };
  const out: Sniffed = { mime: "audio/ogg", ext: "ogg", kind: "audio" };
  if (ascii(b, body, 7) === "\x01vorbis") Object.assign(out, { audioCodec: "vorbis", channels: u8(b, body + 11), sampleRate: u32le(b, body + 12) });
  else if (ascii(b, body, 8) === "OpusHead") Object.assign(out, { audioCodec: "opus", channels: u8(b, body + 9), sampleRate: 48_000 });
  else if (ascii(b, body, 5) === "\x7fFLAC") out.audioCodec = "flac";
  return out;
}

/** Seconds of an Ogg stream: the granule position of the last page in `tail` (the file's end) over the sample rate. */
export function oggDuration(tail: Uint8Array, sampleRate: number): number | undefined {
  for (let o = tail.length - 27; o >= 0; o--) {
    if (tail[o] !== 0x4f || ascii(tail, o, 4) !== "OggS") continue;
    const granule = u32le(tail, o + 10) * 2 ** 32 + u32le(tail, o + 6);
    return sampleRate > 0 && granule > 0 && granule < 2 ** 52 ? granule / sampleRate : undefined;
  }
  return undefined;
}

const MP3_RATES = [44100, 48000, 32000];
const MP3_KBPS_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_KBPS_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];

/**
 * MPEG audio: the first frame after an ID3v2 tag gives the rate, channels and bitrate; a Xing/Info header in it
 * gives the frame count (variable bitrate), otherwise the duration is the audio bytes over the constant bitrate.
 */
function mp3(b: Uint8Array, total: number): Sniffed {
  const out: Sniffed = { mime: "audio/mpeg", ext: "mp3", kind: "audio", audioCodec: "mp3" };
  let o = 0;
  if (ascii(b, 0, 3) === "ID3") o = 10 + ((u8(b, 6) & 0x7f) << 21) + ((u8(b, 7) & 0x7f) << 14) + ((u8(b, 8) & 0x7f) << 7) + (u8(b, 9) & 0x7f);
  for (let i = 0; i < 4096 && o + 4 <= b.length && !mpegAudioFrame(b, o); i++) o++;
  if (!mpegAudioFrame(b, o)) return out;
  const v1 = ((u8(b, o + 1) >> 3) & 3) === 3;
  const rate = (MP3_RATES[(u8(b, o + 2) >> 2) & 3] ?? 0) / (v1 ? 1 : ((u8(b, o + 1) >> 3) & 3) === 2 ? 2 : 4);
  const kbps = (v1 ? MP3_KBPS_V1 : MP3_KBPS_V2)[u8(b, o + 2) >> 4] ?? 0;
  const mono = u8(b, o + 3) >> 6 === 3;
  out.channels = mono ? 1 : 2;
  out.sampleRate = rate;
  const side = v1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const tag = ascii(b, o + 4 + side, 4);
  if ((tag === "Xing" || tag === "Info") && u32be(b, o + 8 + side) & 1) {
    const frames = u32be(b, o + 12 + side);
    if (frames && rate) out.duration = (frames * (v1 ? 1152 : 576)) / rate;
  } else if (kbps) out.duration = ((total - o) * 8) / (kbps * 1000);
  return out;
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
