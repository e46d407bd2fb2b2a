// One file in, what Tern keeps of it out: checked from its headers (store.ts inspectFile: type from the bytes, caps,
// whole), processed (process-image.ts for pictures; video and audio are described from their headers, not decoded),
// then stored in R2 under keys the caller names. Everything is decided before the first write, and a failed write
// removes what this call wrote, so a refused or failed file leaves nothing behind. Takes a Blob and the declared
// type, so remote media (fetched into a Blob by the guarded fetch) can come through the same road.
import type { Env } from "../env";
import type { ImagesEnv } from "./images";
import { ORIGINAL_PIXELS, processImage, processThumbnail, type ImageFile, type ProcessedImage } from "./process-image";
import { buildMeta, deleteStored, imageMeta, inspectFile, type Inspected, type MediaType } from "./store";

export type IngestEnv = Pick<Env, "MEDIA"> & ImagesEnv;

/** Names the R2 key of each stored variant. */
export type KeyFor = (variant: "original" | "small" | "thumbnail" | "upload", ext: string) => string;

export interface Ingested {
  fileKey: string;
  /** null: the original is its own preview (a small still picture), or a video/audio without thumbnail. */
  previewKey: string | null;
  contentType: string;
  /** Bytes of the stored original. */
  size: number;
  type: MediaType;
  meta: Record<string, unknown>;
  blurhash: string | null;
}

/** What an attachment's row keeps of a stored file (its upload, its processing, a remote file's copy). */
export const storedFileColumns = (s: Ingested) => ({
  fileKey: s.fileKey,
  previewKey: s.previewKey,
  contentType: s.contentType,
  fileSize: s.size,
  meta: s.meta,
});

const put = (env: IngestEnv, key: string, body: Uint8Array | Blob, contentType: string) => env.MEDIA.put(key, body, { httpMetadata: { contentType } });

/** Writes `files` in order; on a failure removes those already written, then throws. */
async function putAll(env: IngestEnv, files: { key: string; body: Uint8Array | Blob; type: string }[]): Promise<void> {
  const done: string[] = [];
  try {
    for (const f of files) {
      await put(env, f.key, f.body, f.type);
      done.push(f.key);
    }
  } catch (e) {
    await deleteStored(env, done).catch(() => {});
    throw e;
  }
}

/**
 * Whether an upload through /api/v2/media is answered 202 and processed after the answer: a picture that must be
 * scaled down (above 3840×2160 of area), the slow part of processing. Video and audio need no processing here (they
 * are stored as uploaded), so they are answered at once; Mastodon defers them because it transcodes.
 */
export const processLater = (x: Inspected): boolean =>
  x.sniffed.kind === "image" && (x.sniffed.frames ?? 0) <= 1 && (x.sniffed.width ?? 0) * (x.sniffed.height ?? 0) > ORIGINAL_PIXELS;

/** Stores a checked upload as it came (metadata stripped), for processStagedMedia to process. */
export async function stageUpload(env: IngestEnv, x: Inspected, keyFor: KeyFor): Promise<string> {
  const key = keyFor("upload", x.sniffed.ext);
  await putAll(env, [{ key, body: x.bytes ?? new Uint8Array(), type: x.sniffed.mime }]);
  return key;
}

/** Checks, processes and stores one attachment file. Throws 422 (the file) or 503 (the Images binding); stores nothing then. */
export async function ingestMedia(env: IngestEnv, file: Blob, declaredType: string | null, keyFor: KeyFor): Promise<Ingested> {
  return ingestInspected(env, file, await inspectFile(file, { declaredType }), keyFor);
}

/** ingestMedia for a file already checked by inspectFile. */
export async function ingestInspected(env: IngestEnv, file: Blob, x: Inspected, keyFor: KeyFor): Promise<Ingested> {
  if (x.sniffed.kind !== "image" || !x.bytes) {
    const fileKey = keyFor("original", x.sniffed.ext);
    await putAll(env, [{ key: fileKey, body: file, type: x.sniffed.mime }]);
    const meta = buildMeta(x.sniffed, x.size);
    return { fileKey, previewKey: null, contentType: x.sniffed.mime, size: x.size, type: x.sniffed.kind, meta, blurhash: null };
  }
  return storeImage(env, await processImage(env, x.bytes, x.sniffed), keyFor);
}

/** Stores a processed image (original, and preview when it has one) and describes it. */
export async function storeImage(env: IngestEnv, p: ProcessedImage, keyFor: KeyFor): Promise<Ingested> {
  const fileKey = keyFor("original", p.original.ext);
  const previewKey = p.preview ? keyFor("small", p.preview.ext) : null;
  const files = [{ key: fileKey, body: p.original.bytes, type: p.original.mime }];
  if (p.preview && previewKey) files.push({ key: previewKey, body: p.preview.bytes, type: p.preview.mime });
  await putAll(env, files);
  return {
    fileKey,
    previewKey,
    contentType: p.original.mime,
    size: p.original.bytes.length,
    type: "image",
    meta: imageMeta(p.original, p.preview ?? p.original),
    blurhash: p.blurhash,
  };
}

export interface CheckedThumbnail {
  image: ImageFile;
  blurhash: string | null;
}

/** Checks and processes a video's or audio's `thumbnail` upload, without storing it (storeThumbnail does). */
export async function prepareThumbnail(env: ImagesEnv, file: Blob): Promise<CheckedThumbnail> {
  const x = await inspectFile(file, { imagesOnly: true });
  if (!x.bytes) throw new Error("an image is always read whole");
  return processThumbnail(env, x.bytes, x.sniffed);
}

/** Stores a prepared thumbnail; meta.small describes it. */
export async function storeThumbnail(env: IngestEnv, t: CheckedThumbnail, keyFor: KeyFor) {
  const key = keyFor("thumbnail", t.image.ext);
  await putAll(env, [{ key, body: t.image.bytes, type: t.image.mime }]);
  const small = imageMeta(t.image, t.image).small;
  return { key, small, blurhash: t.blurhash };
}
