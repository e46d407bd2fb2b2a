// Uploads into R2: the real type comes from the bytes (sniff.ts), the key is made here (never from the filename,
// security F2), and the size, pixel and frame caps are applied before the object is written (F1, F3, F4).
// Attachments then go through media/ingest.ts (previews, sizes, blurhash through the Images binding); avatars,
// headers and site images are stored as checked here. GIFs stay images (Mastodon turns them into gifv video). Images
// are stored without their metadata (EXIF, XMP, IPTC, comments: strip-metadata.ts), as Mastodon's processing drops them.
import type { Config, Env } from "../env";
import { toHex } from "../lib/security/crypto";
import { unprocessable, validationFailed } from "../lib/http/errors";
import { canonicalMime } from "../lib/http/media-types";
import { isComplete } from "./complete";
import { snowflake } from "../lib/text/ids";
import { oggDuration, sniff, type Sniffed } from "./sniff";
import { stripMetadata } from "./strip-metadata";

export const IMAGE_LIMIT = 16 * 1024 * 1024;
export const VIDEO_LIMIT = 99 * 1024 * 1024;
export const AVATAR_LIMIT = 8 * 1024 * 1024;
/** Mastodon's MAX_IMAGE_PIXELS (7680×4320). */
export const MAX_IMAGE_PIXELS = 33_177_600;
/** Mastodon's video matrix limit (3840×2160). */
export const MAX_VIDEO_PIXELS = 8_294_400;
export const MAX_FRAMES = 1000;
/** Multipart overhead allowed on top of the largest file before the request is refused unread. */
export const UPLOAD_BODY_LIMIT = VIDEO_LIMIT + 1024 * 1024;

const HEAD_BYTES = 1024 * 1024;
const MAX_MOOV = 16 * 1024 * 1024;

export type UploadPurpose = "avatar" | "header" | "attachment";
export type MediaType = "image" | "gifv" | "video" | "audio";

export interface StoredFile {
  key: string;
  contentType: string;
  size: number;
  type: MediaType;
  meta: Record<string, unknown>;
}

export interface Inspected {
  sniffed: Sniffed;
  /** The whole file, metadata removed, when it was read (images); video and audio go to R2 from the Blob without a copy. */
  bytes: Uint8Array | null;
  /** Bytes that will be stored. */
  size: number;
}

const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;

export interface InspectOptions {
  /** Avatars, headers, thumbnails: still or animated images only. */
  imagesOnly?: boolean;
  imageLimit?: number;
  /** The type the client or the remote server declared: a file whose bytes are of another kind is refused. */
  declaredType?: string | null;
}

/** image, or audio/video (one family: an audio-only MP4 or WebM is often declared video/…). */
const family = (mime: string) => (mime.startsWith("image/") ? "image" : "av");

/** Reads just enough of `file` to know what it is and checks every cap; throws 422 on anything refused. */
export async function inspectFile(file: Blob, opts: InspectOptions = {}): Promise<Inspected> {
  const imageLimit = opts.imageLimit ?? IMAGE_LIMIT;
  if (!file || typeof file === "string" || file.size === 0) throw validationFailed("File can't be blank");
  if (file.size > VIDEO_LIMIT) throw validationFailed(`File file size must be less than ${mb(VIDEO_LIMIT)}`);
  const head = new Uint8Array(await file.slice(0, HEAD_BYTES).arrayBuffer());
  let s = sniff(head, file.size);
  if (!s || (opts.imagesOnly && s.kind !== "image")) throw validationFailed("File content type is invalid");
  const declared = canonicalMime(opts.declaredType);
  if (declared && family(declared) !== family(s.mime)) throw unprocessable("File content does not match its declared type");
  // HEIC is converted by the attachment pipeline only; browsers do not show it as an avatar or a header.
  if (opts.imagesOnly && opts.imageLimit === AVATAR_LIMIT && s.mime === "image/heic") throw validationFailed("File content type is invalid");
  const limit = s.kind === "image" ? imageLimit : VIDEO_LIMIT;
  if (file.size > limit) throw validationFailed(`File file size must be less than ${mb(limit)}`);

  let bytes: Uint8Array | null = null;
  // Sizes the head already gives (a JPEG's frame header, PNG's IHDR, …) are checked before the rest is read: a bomb is
  // refused without reading its megabytes.
  if (s.kind === "image" && s.width && s.height) checkCaps(s);
  if (s.kind === "image") {
    bytes = file.size <= HEAD_BYTES ? head : new Uint8Array(await file.arrayBuffer());
    s = sniff(bytes);
    if (!s) throw validationFailed("File content type is invalid");
    checkCaps(s);
    if (!isComplete(bytes, s.mime)) throw unprocessable("File is incomplete: the image data ends before the picture does");
    // What is stored and described is the stripped file; a file whose structure breaks before its picture is refused.
    bytes = stripMetadata(bytes, s.mime);
    s = sniff(bytes);
    if (!s) throw validationFailed("File content type is invalid");
  } else if (s.ext === "mp4" || s.ext === "mov" || s.ext === "m4a") {
    if (file.size > HEAD_BYTES) s = (await sniffIsoFromBlob(file)) ?? s;
  } else if (s.mime === "audio/ogg" && s.sampleRate) {
    const tail = new Uint8Array(await file.slice(Math.max(0, file.size - 65_536)).arrayBuffer());
    s.duration = oggDuration(tail, s.sampleRate);
  }
  checkCaps(s);
  return { sniffed: s, bytes, size: bytes?.length ?? file.size };
}

function checkCaps(s: Sniffed): void {
  const w = s.width ?? 0;
  const h = s.height ?? 0;
  if (s.kind === "image") {
    if (!w || !h) throw unprocessable("File type of uploaded media could not be verified");
    if (w * h > MAX_IMAGE_PIXELS) throw unprocessable(`${w}x${h} images are not supported`);
    if ((s.frames ?? 0) > MAX_FRAMES) throw unprocessable(`Animations with more than ${MAX_FRAMES} frames are not supported`);
    if ((s.frames ?? 0) > 1 && w * h * (s.frames ?? 0) > MAX_IMAGE_PIXELS * 4) {
      throw unprocessable(`${w}x${h} animations with ${s.frames} frames are not supported`);
    }
  } else if (s.kind === "video" && w * h > MAX_VIDEO_PIXELS) {
    throw unprocessable(`${w}x${h} videos are not supported`);
  }
}

/** MP4/MOV whose `moov` sits past the head (not "fast start"): walk top-level box headers by slicing the Blob. */
async function sniffIsoFromBlob(file: Blob): Promise<Sniffed | null> {
  let o = 0;
  let ftyp: Uint8Array | null = null;
  for (let i = 0; i < 1000 && o + 8 <= file.size; i++) {
    const h = new Uint8Array(await file.slice(o, o + 16).arrayBuffer());
    const dv = new DataView(h.buffer, h.byteOffset, h.byteLength);
    let size = dv.getUint32(0);
    const type = String.fromCharCode(...h.subarray(4, 8));
    if (size === 1 && h.length >= 16) size = dv.getUint32(8) * 2 ** 32 + dv.getUint32(12);
    else if (size === 0) size = file.size - o;
    if (size < 8) return null;
    if (type === "ftyp" && size <= 4096) ftyp = new Uint8Array(await file.slice(o, o + size).arrayBuffer());
    if (type === "moov") {
      if (!ftyp || size > MAX_MOOV) return null;
      const moov = new Uint8Array(await file.slice(o, o + size).arrayBuffer());
      const joined = new Uint8Array(ftyp.length + moov.length);
      joined.set(ftyp);
      joined.set(moov, ftyp.length);
      return sniff(joined);
    }
    o += size;
  }
  return null;
}

const dims = (w?: number, h?: number) => (w && h ? { width: w, height: h, size: `${w}x${h}`, aspect: w / h } : {});

/** Mastodon's meta.original/meta.small for stored pictures. */
export const imageMeta = (original: { width: number; height: number }, small: { width: number; height: number }) => ({
  original: dims(original.width, original.height),
  small: dims(small.width, small.height),
});

/** A frame rate as Mastodon writes it (ffprobe's rational): "30/1", "30000/1001". */
function rational(fps: number): string {
  if (Number.isInteger(fps)) return `${fps}/1`;
  const ntsc = Math.round(fps * 1.001); // 29.97 is 30000/1001
  if (Math.abs(fps - ntsc / 1.001) < 0.01) return `${ntsc * 1000}/1001`;
  return `${Math.round(fps * 100)}/100`;
}

/** Mastodon-shaped `meta` for what the headers told us; `size` (bytes) gives the average bitrate. */
export function buildMeta(s: Sniffed, size = 0): Record<string, unknown> {
  if (s.kind === "image") {
    const original = dims(s.width, s.height);
    return { original, small: { ...original } };
  }
  const duration = s.duration != null && Number.isFinite(s.duration) && s.duration > 0 ? Math.round(s.duration * 100) / 100 : undefined;
  const bitrate = duration && size ? Math.round((size * 8) / (s.duration ?? duration)) : undefined;
  const timing = duration != null ? { duration, length: formatLength(duration) } : {};
  const audio = {
    ...(s.audioCodec ? { audio_encode: s.audioCodec } : {}),
    ...(s.sampleRate ? { audio_bitrate: `${s.sampleRate} Hz` } : {}),
    ...(s.channels ? { audio_channels: s.channels === 1 ? "mono" : s.channels === 2 ? "stereo" : `${s.channels} channels` } : {}),
  };
  const rate = bitrate ? { bitrate } : {};
  if (s.kind === "video") {
    const d = dims(s.width, s.height);
    const fps = s.fps && Number.isFinite(s.fps) ? s.fps : undefined;
    return {
      ...d,
      ...timing,
      ...(fps ? { fps: Math.round(fps) } : {}),
      ...audio,
      original: {
        ...(s.width ? { width: s.width, height: s.height } : {}),
        ...(fps ? { frame_rate: rational(fps) } : {}),
        ...(duration != null ? { duration } : {}),
        ...rate,
      },
    };
  }
  return { ...timing, ...audio, original: { ...(duration != null ? { duration } : {}), ...rate } };
}

function formatLength(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = (seconds % 60).toFixed(2).padStart(5, "0");
  return `${h}:${String(m).padStart(2, "0")}:${sec}`;
}

/** Writes an inspected file at `key` with its sniffed content type. */
export async function putInspected(env: Pick<Env, "MEDIA">, key: string, file: Blob, x: Inspected): Promise<void> {
  await env.MEDIA.put(key, x.bytes ?? file, { httpMetadata: { contentType: x.sniffed.mime } });
}

/** 128 random bits from the platform's CSPRNG, as 32 hex digits: what makes a media URL unguessable. */
export const randomKeyPart = () => toHex(crypto.getRandomValues(new Uint8Array(16)));

/**
 * Key for a new upload. Attachments live under their row id (so serve.ts can find the row in one primary-key read)
 * plus a random folder: the id alone is a timestamp and a sequence, guessable by anyone who saw a neighbour's.
 */
export function uploadKey(purpose: UploadPurpose, ext: string, id?: string): string {
  if (purpose === "attachment") return `media_attachments/${id ?? snowflake()}/${randomKeyPart()}/original.${ext}`;
  return `accounts/${purpose === "avatar" ? "avatars" : "headers"}/${randomKeyPart()}/original.${ext}`;
}

/**
 * Keys of one attachment's files (media/ingest.ts): `media_attachments/<id>/<random>/<variant>.<ext>`. Make a new
 * one for each write (a replaced thumbnail gets a new folder), as served objects are cached as immutable.
 */
export const attachmentKeys =
  (id: string) =>
  (variant: string, ext: string): string => {
    const folder = randomKeyPart();
    return `media_attachments/${id}/${folder}/${variant}.${ext}`;
  };

/** Key for an attachment's thumbnail; a new one each time, as served objects are cached as immutable. */
export const thumbnailKey = (id: string, ext: string) => `media_attachments/${id}/${randomKeyPart()}/thumbnail.${ext}`;

/**
 * Validates and stores one uploaded file. Avatars and headers must be still or animated images up to 8 MB;
 * attachments may be images (16 MB), video or audio (99 MB). Throws 422 for anything refused.
 */
export async function storeUpload(env: Pick<Env, "MEDIA">, cfg: Config, file: File, purpose: UploadPurpose): Promise<StoredFile> {
  void cfg;
  const avatarLike = purpose !== "attachment";
  const x = await inspectFile(file, avatarLike ? { imagesOnly: true, imageLimit: AVATAR_LIMIT } : {});
  const key = uploadKey(purpose, x.sniffed.ext);
  await putInspected(env, key, file, x);
  return { key, contentType: x.sniffed.mime, size: x.size, type: x.sniffed.kind, meta: buildMeta(x.sniffed, x.size) };
}

/** R2 deletes at most 1000 keys per call. */
const DELETE_CHUNK = 1000;

/**
 * Removes the copies under `prefix` other than `keep` that `also` accepts (a remote picture, emoji or card image
 * replaced by a new copy: the old one's key was dropped from its row, not its object). One list, at most 20 objects.
 */
export async function deleteOtherCopies(env: Pick<Env, "MEDIA">, prefix: string, keep: string, also: (key: string) => boolean = () => true): Promise<void> {
  const listed = await env.MEDIA.list({ prefix, limit: 20 });
  await deleteStored(
    env,
    listed.objects.map((o) => o.key).filter((k) => k !== keep && also(k)),
  );
}

/** Removes stored objects, ignoring ones already gone (so running it twice changes nothing). */
export async function deleteStored(env: Pick<Env, "MEDIA">, keys: (string | null | undefined)[]): Promise<void> {
  const list = [...new Set(keys.filter((k): k is string => !!k))];
  for (let i = 0; i < list.length; i += DELETE_CHUNK) await env.MEDIA.delete(list.slice(i, i + DELETE_CHUNK));
}
