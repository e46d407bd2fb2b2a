// Media files for the pipeline tests, built byte by byte: pictures with content (so previews and blurhashes mean
// something), a rotated PNG, and the audio/video headers the upload reads (MP4 with frame timing, WebM, WAV, FLAC,
// MP3, Ogg Vorbis).
import { crc32 } from "../../src/lib/text/crc32";
import { concat } from "./media-fixtures";

const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const be16 = (n: number) => [(n >>> 8) & 255, n & 255];
const ascii = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));

export const pngChunk = (type: string, data: Uint8Array | number[]) => {
  const td = concat(ascii(type), data);
  return concat(be32(td.length - 4), td, be32(crc32(td)));
};

async function deflate(raw: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
}

/** An RGB PNG whose pixel at (x, y) is `colour(x, y)`. */
export async function pngOf(w: number, h: number, colour: (x: number, y: number) => [number, number, number]): Promise<Uint8Array> {
  const raw = new Uint8Array(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(colour(x, y), y * (1 + 3 * w) + 1 + 3 * x);
  const ihdr = [...be32(w), ...be32(h), 8, 2, 0, 0, 0];
  return concat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pngChunk("IHDR", ihdr), pngChunk("IDAT", await deflate(raw)), pngChunk("IEND", []));
}

/** A photo-like gradient: red across, green down, with noise the encoder cannot squeeze away. */
export const photo = (w: number, h: number) =>
  pngOf(w, h, (x, y) => [(x * 255) / w, (y * 255) / h, ((x * 7919 + y * 104729) % 97) + 80].map(Math.round) as [number, number, number]);

/** `png` with an eXIf chunk (after IHDR) holding only EXIF Orientation `o`. */
export function withOrientation(png: Uint8Array, o: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, o, 0, 0, 0, 0, 0, 0];
  return concat(png.subarray(0, 33), pngChunk("eXIf", tiff), png.subarray(33));
}

function box(type: string, ...payload: (Uint8Array | number[])[]): Uint8Array {
  const body = concat(...payload);
  return concat(be32(body.length + 8), ascii(type), body);
}

/** An MP4 with a video track at `fps` (stts), an AAC audio track, and `seconds` of duration; `mdatBytes` of data. */
export function mp4Timed(w: number, h: number, seconds: number, fps: number, mdatBytes: number): Uint8Array {
  const ftyp = box("ftyp", ascii("isom"), be32(512), ascii("isomiso2mp41"));
  const mvhd = box("mvhd", [0, 0, 0, 0], be32(0), be32(0), be32(1000), be32(Math.round(seconds * 1000)), new Uint8Array(80));
  const track = (handler: string, tkhd: Uint8Array, timescale: number, entry: Uint8Array, stts: Uint8Array) =>
    box(
      "trak",
      tkhd,
      box(
        "mdia",
        box("mdhd", [0, 0, 0, 0], be32(0), be32(0), be32(timescale), be32(Math.round(seconds * timescale)), [0, 0, 0, 0]),
        box("hdlr", [0, 0, 0, 0], be32(0), ascii(handler), new Uint8Array(12), [0]),
        box("minf", box("stbl", box("stsd", [0, 0, 0, 0], be32(1), entry), stts)),
      ),
    );
  const frames = Math.round(seconds * fps);
  const video = track(
    "vide",
    box("tkhd", [0, 0, 0, 3], new Uint8Array(72), be32(w << 16), be32(h << 16)),
    fps * 1000,
    box("avc1", new Uint8Array(6), be16(1), new Uint8Array(16), be16(w), be16(h), new Uint8Array(50)),
    box("stts", [0, 0, 0, 0], be32(1), be32(frames), be32(1000)),
  );
  const audio = track(
    "soun",
    box("tkhd", [0, 0, 0, 3], new Uint8Array(80)),
    44100,
    box("mp4a", new Uint8Array(6), be16(1), new Uint8Array(8), be16(2), be16(16), new Uint8Array(4), be32(44100 << 16)),
    box("stts", [0, 0, 0, 0], be32(0)),
  );
  return concat(ftyp, box("moov", mvhd, video, audio), box("mdat", new Uint8Array(mdatBytes)));
}

const ebml = (id: number[], body: Uint8Array | number[]) => {
  const b = body instanceof Uint8Array ? body : Uint8Array.from(body);
  return concat(id, [0x08, ...be32(b.length)], b); // a 5-byte size
};
const f64 = (x: number) => {
  const a = new Uint8Array(8);
  new DataView(a.buffer).setFloat64(0, x);
  return a;
};

/** A WebM header: EBML (docType webm), Info (duration in ms), a VP9 video track at `fps` and an Opus track. */
export function webm(w: number, h: number, seconds: number, fps: number): Uint8Array {
  const head = ebml([0x1a, 0x45, 0xdf, 0xa3], ebml([0x42, 0x82], ascii("webm")));
  const info = ebml([0x15, 0x49, 0xa9, 0x66], concat(ebml([0x2a, 0xd7, 0xb1], be32(1_000_000)), ebml([0x44, 0x89], f64(seconds * 1000))));
  const videoTrack = ebml(
    [0xae],
    concat(
      ebml([0x83], [1]),
      ebml([0x86], ascii("V_VP9")),
      ebml([0x23, 0xe3, 0x83], be32(Math.round(1e9 / fps))),
      ebml([0xe0], concat(ebml([0xb0], be16(w)), ebml([0xba], be16(h)))),
    ),
  );
  const audioTrack = ebml([0xae], concat(ebml([0x83], [2]), ebml([0x86], ascii("A_OPUS")), ebml([0xe1], concat(ebml([0x9f], [2]), ebml([0xb5], f64(48000))))));
  const segment = ebml(
    [0x18, 0x53, 0x80, 0x67],
    concat(info, ebml([0x16, 0x54, 0xae, 0x6b], concat(videoTrack, audioTrack)), ebml([0x1f, 0x43, 0xb6, 0x75], new Uint8Array(32))),
  );
  return concat(head, segment);
}

/** A PCM WAV: 16-bit stereo at 44.1 kHz, `seconds` long (silence). */
export function wav(seconds: number): Uint8Array {
  const data = Math.round(seconds * 44100) * 4;
  const fmt = concat(ascii("fmt "), le32(16), le16(1), le16(2), le32(44100), le32(44100 * 4), le16(4), le16(16));
  return concat(ascii("RIFF"), le32(4 + fmt.length + 8 + data), ascii("WAVE"), fmt, ascii("data"), le32(data), new Uint8Array(data));
}

/** A FLAC header: STREAMINFO for `seconds` of mono at 48 kHz. */
export function flac(seconds: number): Uint8Array {
  const samples = Math.round(seconds * 48000);
  const si = new Uint8Array(34);
  si[10] = 48000 >> 12;
  si[11] = (48000 >> 4) & 0xff;
  si[12] = ((48000 & 0xf) << 4) | (0 << 1) | 0; // 1 channel, 16 bits (bps-1 = 15 spans bytes 12–13)
  si[13] = (15 << 4) | 0;
  si.set(be32(samples), 14);
  return concat(ascii("fLaC"), [0x80, 0, 0, 34], si, new Uint8Array(64));
}

/** A constant-bitrate MP3: `frames` MPEG-1 layer III frames at 128 kb/s, 44.1 kHz, stereo (417 bytes each). */
export function mp3(frames: number): Uint8Array {
  const frame = new Uint8Array(417);
  frame.set([0xff, 0xfb, 0x90, 0x00]);
  return concat(...Array.from({ length: frames }, () => frame));
}

/** An Ogg Vorbis stream: a first page with the identification header, and a last page at granule `seconds`×44100. */
export function oggVorbis(seconds: number): Uint8Array {
  const page = (flags: number, granule: number, serial: number, seq: number, body: Uint8Array | number[]) => {
    const b = body instanceof Uint8Array ? body : Uint8Array.from(body);
    return concat(ascii("OggS"), [0, flags], le32(granule), le32(0), le32(serial), le32(seq), le32(0), [1, b.length], b);
  };
  const id = concat([1], ascii("vorbis"), le32(0), [2], le32(44100), le32(0), le32(128000), le32(0), [0xb8, 1]);
  return concat(page(2, 0, 7, 0, id), new Uint8Array(2000), page(4, Math.round(seconds * 44100), 7, 1, new Uint8Array(10)));
}
