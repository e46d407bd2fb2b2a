// Remote media into R2: a file another server serves, fetched through the SSRF-guarded fetch and taken through the
// same checks and processing as an upload (ingest.ts). Pictures are read whole, capped at Mastodon's 16 MB (the
// Images binding needs their bytes); video and audio are streamed into R2 (in parts when their length is not given),
// capped at 99 MB, never wholly in memory, then described from their headers read back by range. Whatever fails,
// nothing this call wrote stays in R2.
// A failure says whether trying again later may help (`transient`: the server was unreachable, slow, or answered 5xx
// or 429; the Images binding failed) or not (404, not the declared kind of file, over the cap, refused by the guard).
import { ApiError } from "../lib/http/errors";
import { FetchRefused, type SafeFetchOptions, safeFetch, safeFetchStream } from "../net/safe-fetch";
import { ingestInspected, type IngestEnv, type Ingested, type KeyFor } from "./ingest";
import { sniff } from "./sniff";
import { AVATAR_LIMIT, buildMeta, deleteStored, IMAGE_LIMIT, inspectFile, putInspected, VIDEO_LIMIT } from "./store";
import { concatBytes } from "../lib/http/capped-body";
import { blurhashOf } from "./process-image";

export class RemoteMediaFailed extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** Time for a picture (`timeoutMs` of the caller's options, REMOTE_MEDIA_TIMEOUT_MS, overrides both) (16 MB at most) and for a video or audio file (99 MB at most, about 1 MB/s at the least). */
export const PICTURE_TIMEOUT_MS = 30_000;
export const STREAM_TIMEOUT_MS = 120_000;
const HEAD_BYTES = 1024 * 1024;

const refusedIsTransient = (reason: string) => reason.startsWith("network error") || reason === "timed out";
const statusIsTransient = (status: number) => status >= 500 || status === 429 || status === 408;

/** What a thrown error means for the cache: a RemoteMediaFailed, transient or not. */
export function remoteFailure(e: unknown): RemoteMediaFailed {
  if (e instanceof RemoteMediaFailed) return e;
  if (e instanceof FetchRefused) return new RemoteMediaFailed(e.message, refusedIsTransient(e.reason));
  if (e instanceof ApiError) return new RemoteMediaFailed(e.message, e.status >= 500);
  return new RemoteMediaFailed(e instanceof Error ? e.message : String(e), true);
}

const streamed = (declared: string | null) => /^(video|audio)\//.test(declared ?? "");

/**
 * Fetches `url` and stores it through the upload pipeline under `keyFor`'s keys. `declaredType`: the mediaType the
 * remote server gave (video and audio are streamed; anything else is read as a picture, whose bytes decide).
 * `renditions`: a picture gets the upload's preview, sizes and blurhash (the Images binding: two transformations);
 * otherwise it is stored as sent after the same checks, measured from its header, its own preview, and given a
 * blurhash (one transformation) only when `needsBlurhash` (its sender gave none).
 * Throws RemoteMediaFailed; nothing stays stored then.
 */
export async function ingestRemote(
  env: IngestEnv,
  url: string,
  declaredType: string | null,
  keyFor: KeyFor,
  fetchOpts: SafeFetchOptions,
  renditions = true,
  needsBlurhash = true,
): Promise<Ingested> {
  try {
    return streamed(declaredType?.toLowerCase() ?? null)
      ? await ingestStreamed(env, url, declaredType, keyFor, fetchOpts)
      : await ingestPicture(env, url, declaredType, keyFor, fetchOpts, renditions, needsBlurhash);
  } catch (e) {
    throw remoteFailure(e);
  }
}

async function ingestPicture(
  env: IngestEnv,
  url: string,
  declaredType: string | null,
  keyFor: KeyFor,
  fetchOpts: SafeFetchOptions,
  renditions: boolean,
  needsBlurhash: boolean,
): Promise<Ingested> {
  const res = await safeFetch(url, {
    timeoutMs: PICTURE_TIMEOUT_MS,
    ...fetchOpts,
    headers: { accept: "image/*, */*;q=0.5", "accept-encoding": "identity" },
    maxBytes: IMAGE_LIMIT,
    wantBody: (status) => status === 200,
  });
  if (res.status !== 200) throw new RemoteMediaFailed(`status ${res.status}`, statusIsTransient(res.status));
  const file = new Blob([res.body]);
  // A type that names no kind of media (application/octet-stream from a bucket) leaves it to the bytes.
  const declared = declaredType ?? res.headers.get("content-type");
  const x = await inspectFile(file, { declaredType: /^(image|video|audio)\//i.test(declared ?? "") ? declared : null });
  if (renditions || x.sniffed.kind !== "image") return ingestInspected(env, file, x, keyFor);
  // The binding failing on the blurhash leaves the attachment without one, as a PNG it cannot read does.
  const blurhash = needsBlurhash && x.bytes ? await blurhashOf(env, x.bytes).catch(() => null) : null;
  const fileKey = keyFor("original", x.sniffed.ext);
  await putInspected(env, fileKey, file, x);
  return { fileKey, previewKey: null, contentType: x.sniffed.mime, size: x.size, type: "image", meta: buildMeta(x.sniffed, x.size), blurhash };
}

/**
 * Fetches an avatar or a header and stores it as it came (no rendition: the remote server sized it, and the Images
 * binding's monthly transformations are kept for attachments), after the checks of an uploaded avatar: a still or
 * animated picture, its bytes deciding the type, at most AVATAR_LIMIT. `keyFor`: its R2 key by extension. Throws
 * RemoteMediaFailed; nothing stays stored then.
 */
export async function storeRemotePicture(
  env: Pick<IngestEnv, "MEDIA">,
  url: string,
  keyFor: (ext: string) => string,
  fetchOpts: SafeFetchOptions,
  limit = AVATAR_LIMIT,
): Promise<string> {
  try {
    const res = await safeFetch(url, {
      timeoutMs: PICTURE_TIMEOUT_MS,
      ...fetchOpts,
      headers: { accept: "image/*, */*;q=0.5", "accept-encoding": "identity" },
      maxBytes: limit,
      wantBody: (status) => status === 200,
    });
    if (res.status !== 200) throw new RemoteMediaFailed(`status ${res.status}`, statusIsTransient(res.status));
    const file = new Blob([res.body]);
    const x = await inspectFile(file, { imagesOnly: true, imageLimit: AVATAR_LIMIT });
    const key = keyFor(x.sniffed.ext);
    await putInspected(env, key, file, x);
    return key;
  } catch (e) {
    throw remoteFailure(e);
  }
}

async function ingestStreamed(env: IngestEnv, url: string, declaredType: string | null, keyFor: KeyFor, fetchOpts: SafeFetchOptions): Promise<Ingested> {
  const res = await safeFetchStream(url, {
    timeoutMs: STREAM_TIMEOUT_MS,
    ...fetchOpts,
    headers: { accept: "video/*, audio/*, */*;q=0.5", "accept-encoding": "identity" },
    maxBytes: VIDEO_LIMIT,
  });
  if (res.status !== 200 || !res.body) {
    await res.cancel();
    throw new RemoteMediaFailed(`status ${res.status}`, statusIsTransient(res.status));
  }
  // R2 takes a stream of a known length in one put; without a Content-Length the file goes up in parts.
  const declaredLength = Number(res.headers.get("content-length") ?? "NaN");
  const known = Number.isSafeInteger(declaredLength) && declaredLength > 0;
  const reader = res.body.getReader();
  const head = await readHead(reader, known ? Math.min(HEAD_BYTES, declaredLength) : HEAD_BYTES);
  const s = sniff(head, known ? declaredLength : VIDEO_LIMIT);
  if (!s || s.kind === "image") {
    await reader.cancel().catch(() => {});
    throw new RemoteMediaFailed("not a video or audio file", false);
  }
  const key = keyFor("original", s.ext);
  try {
    let length = declaredLength;
    if (known) {
      const fixed = new FixedLengthStream(length);
      const writing = pump(head, reader, fixed.writable, length);
      const putting = env.MEDIA.put(key, fixed.readable, { httpMetadata: { contentType: s.mime } });
      // The writer's error says why (the put only sees its stream aborted); both are awaited, so neither is left unhandled.
      const [w, p] = await Promise.allSettled([writing, putting]);
      if (w.status === "rejected") throw w.reason;
      if (p.status === "rejected") throw p.reason;
    } else {
      length = await putInParts(env.MEDIA, key, s.mime, head, reader);
    }
    const x = await inspectFile(r2Blob(env.MEDIA, key, length), { declaredType });
    if (x.sniffed.kind === "image") throw new RemoteMediaFailed("not a video or audio file", false);
    return {
      fileKey: key,
      previewKey: null,
      contentType: x.sniffed.mime,
      size: length,
      type: x.sniffed.kind,
      meta: buildMeta(x.sniffed, length),
      blurhash: null,
    };
  } catch (e) {
    await reader.cancel().catch(() => {});
    await deleteStored(env, [key]).catch(() => {});
    throw e;
  }
}

/** R2's multipart parts: all but the last of one size, at least 5 MiB. */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * Stores `head` and the rest of `reader` at `key` as an R2 multipart upload of PART_BYTES parts (one part in memory at
 * a time), for a body whose length is not known; more than VIDEO_LIMIT aborts it. Returns the length stored.
 */
async function putInParts(
  bucket: R2Bucket,
  key: string,
  contentType: string,
  head: Uint8Array,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<number> {
  const upload = await bucket.createMultipartUpload(key, { httpMetadata: { contentType } });
  const parts: R2UploadedPart[] = [];
  let buffer = new Uint8Array(PART_BYTES);
  let filled = 0;
  let total = 0;
  const take = async (chunk: Uint8Array) => {
    total += chunk.byteLength;
    if (total > VIDEO_LIMIT) throw new RemoteMediaFailed(`over ${VIDEO_LIMIT} bytes`, false);
    let at = 0;
    while (at < chunk.byteLength) {
      const n = Math.min(PART_BYTES - filled, chunk.byteLength - at);
      buffer.set(chunk.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === PART_BYTES) {
        parts.push(await upload.uploadPart(parts.length + 1, buffer));
        buffer = new Uint8Array(PART_BYTES);
        filled = 0;
      }
    }
  };
  try {
    await take(head);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await take(value);
    }
    if (filled || !parts.length) parts.push(await upload.uploadPart(parts.length + 1, buffer.subarray(0, filled)));
    await upload.complete(parts);
    return total;
  } catch (e) {
    await upload.abort().catch(() => {});
    throw e;
  }
}

/** Reads at least `want` bytes (fewer only if the stream ends first). */
async function readHead(reader: ReadableStreamDefaultReader<Uint8Array>, want: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < want) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  return concatBytes(chunks, size);
}

/** Writes `head`, then the rest of `reader`, into `into`; an error of either side aborts the other. */
async function pump(head: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>, into: WritableStream<Uint8Array>, length: number): Promise<void> {
  const w = into.getWriter();
  // A body longer or shorter than its Content-Length is the server's fault, not worth another try.
  const wrongLength = () => new RemoteMediaFailed("body length differs from content-length", false);
  let written = head.byteLength;
  try {
    if (written > length) throw wrongLength();
    await w.write(head);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      written += value.byteLength;
      if (written > length) throw wrongLength();
      await w.write(value);
    }
    if (written !== length) throw wrongLength();
    await w.close();
  } catch (e) {
    await w.abort(e).catch(() => {});
    throw e;
  }
}

/** A stored object seen as a Blob for inspectFile: its size, and slices read by range (a class B operation each). */
function r2Blob(bucket: R2Bucket, key: string, size: number, start = 0, end = size): Blob {
  const length = end - start;
  return {
    size: length,
    type: "",
    slice(a = 0, b = length) {
      const from = Math.max(0, Math.min(a < 0 ? length + a : a, length));
      const to = Math.max(from, Math.min(b < 0 ? length + b : b, length));
      return r2Blob(bucket, key, size, start + from, start + to);
    },
    async arrayBuffer() {
      if (length === 0) return new ArrayBuffer(0);
      const o = await bucket.get(key, { range: { offset: start, length } });
      if (!o) throw new RemoteMediaFailed("stored file missing", true);
      return o.arrayBuffer();
    },
  } as unknown as Blob;
}
