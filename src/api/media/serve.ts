// GET/HEAD /media/<key>: R2 objects with the content type sniffed at upload. Keys are only ever made by the server,
// so anything not shaped like one is a 404 before R2 is asked (no "..", no encoded bytes). Responses are nosniff,
// sandboxed by CSP, inline only for image/video/audio types, and immutable (a key never changes content).
// An attachment's object is served only while its row names it and it is not waiting, detached from a deleted
// status, for a redraft (`attachmentAccess`, src/queries/statuses/media-access.ts): one primary-key read, the row id being the key's second segment.
import { routeGroup } from "../../route-group";
import { attachmentAccess } from "../../queries/statuses/media-access";
import { recacheRemotePictures } from "../../services/remote-media/pictures";
import { recacheRemoteAttachment } from "../../services/remote-media/attachments";

const r = routeGroup();

const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const FILE = /^[A-Za-z0-9_-]{1,64}\.[a-z0-9]{1,5}$/;

/** A server-made key: 2–6 plain segments, the last one `name.ext`. */
export function validKey(key: string): boolean {
  if (key.length > 256) return false;
  const parts = key.split("/");
  if (parts.length < 2 || parts.length > 6) return false;
  return parts.slice(0, -1).every((p) => SEGMENT.test(p)) && FILE.test(parts[parts.length - 1] ?? "");
}

const INLINE = /^(image\/(png|jpeg|gif|webp|avif)|video\/(mp4|quicktime|webm|ogg)|audio\/[a-z0-9.+-]+)$/;

function headersFor(obj: R2Object): Headers {
  const h = new Headers();
  const type = obj.httpMetadata?.contentType || "application/octet-stream";
  const inline = INLINE.test(type);
  h.set("content-type", type);
  h.set("x-content-type-options", "nosniff");
  h.set("content-security-policy", "default-src 'none'; sandbox");
  h.set("cache-control", "public, max-age=31536000, immutable");
  h.set("content-disposition", inline ? "inline" : "attachment");
  h.set("access-control-allow-origin", "*");
  h.set("accept-ranges", "bytes");
  h.set("etag", obj.httpEtag);
  h.set("last-modified", obj.uploaded.toUTCString());
  return h;
}

function keyOf(path: string): string | null {
  const key = path.replace(/^\/media\//, "");
  return key !== path && validKey(key) ? key : null;
}

const missing = () => new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });

r.on(["GET", "HEAD"], "/*", async (c) => {
  const key = keyOf(c.req.path);
  if (!key) return missing();
  const access = await attachmentAccess(c.get("db"), key);
  if (!access.serve) {
    if (!access.redirect) return missing();
    const again = access.recache;
    if (again && "attachment" in again) recacheRemoteAttachment(c.get("fx"), again.attachment);
    if (again && "pictures" in again) recacheRemotePictures(c.get("fx"), again.pictures);
    const to = /^https?:\/\//.test(access.redirect) ? access.redirect : `/media/${access.redirect}`;
    return new Response(null, { status: 302, headers: { location: to, "cache-control": "no-store" } });
  }
  const req = c.req.raw;
  if (req.method === "HEAD") {
    const obj = await c.env.MEDIA.head(key);
    if (!obj) return missing();
    const h = headersFor(obj);
    h.set("content-length", String(obj.size));
    return new Response(null, { status: 200, headers: h });
  }
  const wantsRange = req.headers.has("range");
  let obj: R2Object | R2ObjectBody | null;
  try {
    obj = await c.env.MEDIA.get(key, { onlyIf: req.headers, ...(wantsRange ? { range: req.headers } : {}) });
  } catch {
    return new Response(null, { status: 416, headers: { "content-range": "bytes */*" } }); // unsatisfiable range
  }
  if (!obj) return missing();
  const h = headersFor(obj);
  if (!("body" in obj)) {
    // A precondition stopped the body: unchanged for If-None-Match / If-Modified-Since, failed for If-Match.
    const conditionalGet = req.headers.has("if-none-match") || req.headers.has("if-modified-since");
    return new Response(null, { status: conditionalGet ? 304 : 412, headers: h });
  }
  const range = obj.range as { offset?: number; length?: number; suffix?: number } | undefined;
  if (wantsRange && range) {
    const start = range.suffix != null ? Math.max(0, obj.size - range.suffix) : (range.offset ?? 0);
    const length = range.suffix != null ? obj.size - start : (range.length ?? obj.size - start);
    h.set("content-range", `bytes ${start}-${start + length - 1}/${obj.size}`);
    h.set("content-length", String(length));
    return new Response(obj.body, { status: 206, headers: h });
  }
  h.set("content-length", String(obj.size));
  return new Response(obj.body, { status: 200, headers: h });
});

export default r;
