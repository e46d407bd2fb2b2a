// The Images binding (`[images]` in wrangler.toml; sharp under miniflare locally), called with a time limit and
// with its failures sorted into the two answers an upload can give: the file cannot be decoded (422, the client's
// file) or the service failed or did not answer in time (503, try again; nothing was stored). What decides is the
// error's code on Cloudflare (9412 not an image, 9520 unsupported, 9422 too large, 94xx the input) and, for the
// local binding, whose errors all come as "Unexpected error response 500: <sharp's message>", the decoder's words.
import type { Env } from "../env";
import { ApiError, unprocessable } from "../lib/http/errors";

/** Default time for one binding call (info or one rendition), overridable by IMAGES_TIMEOUT_MS. */
const DEFAULT_TIMEOUT_MS = 15_000;

export type ImagesEnv = Pick<Env, "IMAGES" | "IMAGES_TIMEOUT_MS">;

export const unavailable = () => {
  const e = new ApiError(503, "Media processing is unavailable at the moment, try again later");
  e.headers = { "retry-after": "30" };
  return e;
};
export const undecodable = () => unprocessable("File could not be processed: the image data is damaged or incomplete");

const DECODER_WORDS =
  /unsupported image|read error|corrupt|premature end|truncat|invalid|not a (valid )?(jpeg|png|gif|webp|image)|bad (seek|huffman|data)|vips/i;

/** An error of the binding as the upload's answer. */
export function classify(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const code = Number((err as { code?: unknown })?.code);
  const text = err instanceof Error ? err.message : String(err);
  if (code >= 9400 && code < 9500 && code !== 9408 && code !== 9429) return undecodable();
  if (code === 9520) return undecodable();
  if (DECODER_WORDS.test(text)) return undecodable();
  return unavailable();
}

const timeoutOf = (env: ImagesEnv) => {
  const n = Number(env.IMAGES_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_MS;
};

/** Runs one binding call within the time limit; its failure becomes a 422 or a 503 (classify). */
async function bounded<T>(env: ImagesEnv, run: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable()), timeoutOf(env));
  });
  try {
    return await Promise.race([run(), late]);
  } catch (e) {
    throw classify(e);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

const streamOf = (bytes: Uint8Array) => new Blob([bytes]).stream();

/** What the binding reads the file as: its format and stored (not upright) size. */
export async function imageInfo(env: ImagesEnv, bytes: Uint8Array): Promise<{ format: string; width?: number; height?: number }> {
  const images = env.IMAGES;
  if (!images) throw unavailable();
  return bounded(env, () => images.info(streamOf(bytes)));
}

export interface Rendition {
  transforms: ImageTransform[];
  format: "image/jpeg" | "image/webp" | "image/png";
  quality?: number;
}

/** One rendition of `bytes`, as bytes; a still of the first frame when the input is animated (`anim: false`). */
export async function render(env: ImagesEnv, bytes: Uint8Array, r: Rendition): Promise<Uint8Array> {
  const images = env.IMAGES;
  if (!images) throw unavailable();
  return bounded(env, async () => {
    let t = images.input(streamOf(bytes));
    for (const step of r.transforms) t = t.transform(step);
    const out = await t.output({ format: r.format, anim: false, ...(r.quality ? { quality: r.quality } : {}) });
    return new Uint8Array(await out.response().arrayBuffer());
  });
}
