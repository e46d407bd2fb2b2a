// Reading bodies with a byte cap, counted while streaming (a chunked body has no Content-Length to check first).
// One implementation for request bodies (lib/http/params.ts, media uploads in api/v1/statuses/media.ts) and remote responses
// (net/safe-fetch.ts).
import { ApiError } from "./errors";

/** Reads a stream whole, throwing `tooLarge()` as soon as more than `limit` bytes have arrived. */
export async function readCapped(stream: ReadableStream<Uint8Array> | null, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

/** The chunks of a stream as one array (`size`: their total length). */
export function concatBytes(chunks: Uint8Array[], size = chunks.reduce((n, c) => n + c.byteLength, 0)): Uint8Array {
  const out = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.byteLength;
  }
  return out;
}

/** The stream passed through, erroring once more than `limit` bytes have passed (for consumers that parse as they read). */
export function cappedStream(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  tooLarge: () => Error,
): { body: ReadableStream<Uint8Array> | null; over: () => boolean } {
  let seen = 0;
  let over = false;
  const body =
    stream?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          seen += chunk.byteLength;
          if (seen > limit) {
            over = true;
            ctl.error(tooLarge());
            return;
          }
          ctl.enqueue(chunk);
        },
      }),
    ) ?? null;
  return { body, over: () => over };
}

/** A request's body with the length it declares (an upload's part is streamed as it comes): 411 without one. */
export function declaredBody(req: Request): { body: ReadableStream<Uint8Array>; size: number } {
  const size = Number(req.headers.get("content-length") ?? Number.NaN);
  if (!req.body || !Number.isFinite(size)) throw new ApiError(411, "Validation failed: a part needs a Content-Length");
  return { body: req.body, size };
}
