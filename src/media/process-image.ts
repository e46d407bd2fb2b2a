// The image pipeline, from an upload's bytes to what is stored: the original (upright, within Mastodon's 3840×2160
// by area, HEIC/AVIF as JPEG, without metadata), a preview within Mastodon's small size (480×480 by area, WebP), and
// a blurhash. The Images binding does the decoding (media/images.ts); everything decided before it is decided from
// headers (media/sniff.ts, complete.ts), so a bomb or a broken file never reaches a decoder. Takes bytes and gives
// bytes: media/ingest.ts stores them, for uploads today and for remote media later.
import { encode } from "blurhash";
import { unprocessable } from "../lib/http/errors";
import { imageInfo, render, unavailable, type ImagesEnv } from "./images";
import { decodeSmallPng } from "./png-pixels";
import { sniff, type Sniffed } from "./sniff";
import { stripAllMetadata, stripMetadata } from "./strip-metadata";

/** Mastodon's IMAGE_STYLES: the original is scaled down above 3840×2160 pixels of area, the small one above 480×480. */
export const ORIGINAL_PIXELS = 8_294_400;
export const SMALL_PIXELS = 230_400;
/** Side of the rendition the blurhash is computed from, and Mastodon's blurhash components (4×4). */
const BLURHASH_SIDE = 32;
const BLURHASH_COMPONENTS = 4;

export interface ImageFile {
  bytes: Uint8Array;
  mime: string;
  ext: string;
  width: number;
  height: number;
}

export interface ProcessedImage {
  original: ImageFile;
  /** null: the original is small enough to be its own preview. */
  preview: ImageFile | null;
  blurhash: string | null;
}

/**
 * The box a picture above `pixels` of area is scaled down into, keeping its aspect: Mastodon's geometry (√(pixels·w/h)
 * by √(pixels·h/w)), rounded down where Mastodon rounds to the nearest, so the result is never over the area (Mastodon's
 * 1600×1200 → 554×416 is 230,464 pixels; here the box is 554×415 and the preview 553×415).
 */
export function fitArea(width: number, height: number, pixels: number): { width: number; height: number } {
  if (width * height <= pixels) return { width, height };
  return { width: Math.floor(Math.sqrt((pixels * width) / height)), height: Math.floor(Math.sqrt((pixels * height) / width)) };
}

/**
 * The binding's steps that turn EXIF orientation 2–8 upright: mirror first, then a clockwise quarter turn. Both are
 * the binding's own (`flip`, `rotate`); miniflare's local binding applies `rotate` and ignores `flip`, so the four
 * mirrored orientations (2, 4, 5, 7: rare outside edited files) come out turned but still mirrored locally.
 */
export function uprightSteps(orientation: number): ImageTransform[] {
  const flip: Record<number, "h" | "v"> = { 2: "h", 4: "v", 5: "h", 7: "h" };
  const rotate: Record<number, 90 | 180 | 270> = { 3: 180, 5: 270, 6: 90, 7: 90, 8: 270 };
  const steps: ImageTransform[] = [];
  const f = flip[orientation];
  const r = rotate[orientation];
  if (f) steps.push({ flip: f });
  if (r) steps.push({ rotate: r });
  return steps;
}

/** What the binding may call a format sniff.ts named (the local binding reports any HEIF as image/avif). */
const SAME_FORMAT: Record<string, string[]> = {
  "image/heic": ["image/heic", "image/heif", "image/avif"],
  "image/avif": ["image/avif", "image/heif"],
};

/** Re-encoded originals keep their format, except those browsers do not all show, and GIF (no GIF output). */
const ORIGINAL_OUTPUT: Record<string, { format: "image/jpeg" | "image/webp" | "image/png"; quality?: number }> = {
  "image/jpeg": { format: "image/jpeg", quality: 90 },
  "image/png": { format: "image/png" },
  "image/webp": { format: "image/webp", quality: 90 },
  "image/gif": { format: "image/png" },
  "image/avif": { format: "image/jpeg", quality: 90 },
  "image/heic": { format: "image/jpeg", quality: 90 },
};

/** Sniffs an encoder's output; a binding answer that is not the image asked for is a failure of the binding. */
function described(bytes: Uint8Array): ImageFile {
  const s = sniff(bytes);
  if (s?.kind !== "image" || !s.width || !s.height) throw unavailable();
  return { bytes, mime: s.mime, ext: s.ext, width: s.width, height: s.height };
}

/**
 * Processes an image whose headers were already checked (sniffed, caps applied, whole: complete.ts). Throws 422 for
 * a file the decoder refuses or that is not what its header says, 503 when the binding fails or does not answer.
 */
export async function processImage(env: ImagesEnv, input: Uint8Array, s: Sniffed): Promise<ProcessedImage> {
  const animated = (s.frames ?? 0) > 1;
  const width = s.width ?? 0;
  const height = s.height ?? 0;
  if (!env.IMAGES) return unprocessed(input, s);
  if (animated && width * height > ORIGINAL_PIXELS) throw unprocessable(`${width}x${height} animations are not supported`);

  const { bytes, orientation } = stripAllMetadata(input, s.mime);
  const info = await imageInfo(env, bytes);
  if (info.format !== s.mime && !SAME_FORMAT[s.mime]?.includes(info.format)) throw unprocessable("File content does not match its type");
  // The decoder's size must be the header's (turned a quarter for orientations 5–8 in sniff.ts): anything else is
  // a file built to show one size to a header reader and another to a decoder.
  const sameSize = (info.width === width && info.height === height) || (info.width === height && info.height === width);
  if (!sameSize) throw unprocessable("File content does not match its type");

  let original: ImageFile = { bytes, mime: s.mime, ext: s.ext, width, height };
  const target = fitArea(width, height, ORIGINAL_PIXELS);
  const convert = s.mime === "image/heic" || s.mime === "image/avif";
  if (!animated && (orientation !== 1 || convert || target.width !== width)) {
    const out = ORIGINAL_OUTPUT[s.mime] ?? { format: "image/jpeg", quality: 90 };
    const resize: ImageTransform[] = target.width !== width ? [{ width: target.width, height: target.height, fit: "scale-down" }] : [];
    original = described(await render(env, bytes, { transforms: [...uprightSteps(orientation), ...resize], ...out }));
  }

  let preview: ImageFile | null = null;
  if (animated || original.width * original.height > SMALL_PIXELS) {
    const box = fitArea(original.width, original.height, SMALL_PIXELS);
    const steps: ImageTransform[] = [{ width: box.width, height: box.height, fit: "scale-down" }];
    preview = described(await render(env, original.bytes, { transforms: steps, format: "image/webp", quality: 80 }));
  }
  const blurhash = await blurhashOf(env, (preview ?? original).bytes);
  return { original, preview, blurhash };
}

/**
 * A video's or audio's `thumbnail` upload: one picture within the small size (Mastodon's THUMBNAIL_STYLES), upright,
 * without metadata, and its blurhash.
 */
export async function processThumbnail(env: ImagesEnv, input: Uint8Array, s: Sniffed): Promise<{ image: ImageFile; blurhash: string | null }> {
  if (!env.IMAGES) return { image: unprocessed(input, s).original, blurhash: null };
  const { bytes, orientation } = stripAllMetadata(input, s.mime);
  const info = await imageInfo(env, bytes);
  if (info.format !== s.mime && !SAME_FORMAT[s.mime]?.includes(info.format)) throw unprocessable("Thumbnail content does not match its type");
  const box = fitArea(s.width ?? 0, s.height ?? 0, SMALL_PIXELS);
  const steps: ImageTransform[] = [...uprightSteps(orientation), { width: box.width, height: box.height, fit: "scale-down" }];
  const image = described(await render(env, bytes, { transforms: steps, format: "image/webp", quality: 80 }));
  return { image, blurhash: await blurhashOf(env, image.bytes) };
}

/** Without an Images binding: the file as uploaded, metadata stripped (orientation kept as a minimal EXIF). */
function unprocessed(input: Uint8Array, s: Sniffed): ProcessedImage {
  if (s.mime === "image/heic" || s.mime === "image/avif") throw unprocessable("HEIC and AVIF images need the Images binding, which is not configured");
  const bytes = stripMetadata(input, s.mime);
  return { original: { bytes, mime: s.mime, ext: s.ext, width: s.width ?? 0, height: s.height ?? 0 }, preview: null, blurhash: null };
}

/**
 * The blurhash of a picture: the binding draws it at most 32×32 as a PNG (the format whose pixels Tern reads itself:
 * png-pixels.ts says why), then the `blurhash` package encodes those pixels with Mastodon's 4×4 components. A PNG
 * that cannot be read leaves the attachment without a blurhash (clients then draw a plain placeholder).
 */
export async function blurhashOf(env: ImagesEnv, picture: Uint8Array): Promise<string | null> {
  const png = await render(env, picture, { transforms: [{ width: BLURHASH_SIDE, height: BLURHASH_SIDE, fit: "scale-down" }], format: "image/png" });
  const px = await decodeSmallPng(png);
  if (!px) return null;
  return encode(px.data, px.width, px.height, BLURHASH_COMPONENTS, BLURHASH_COMPONENTS);
}
