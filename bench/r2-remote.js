// Bench only (`node bench/day.mjs --apart`, `--dos-apart`): the R2 bucket served by ANOTHER workerd process
// (bench/services-host.mjs, the same bundle and persistence directory), so the measured workerd's CPU leaves out local
// R2's simulator (which writes each object to disk and indexes it), as production bills R2 apart. The shim speaks the
// part of the bucket API Tern uses (put, get with a range, head, delete, list; multipart uploads are not in the
// replayed day and throw) over a service binding: one HTTP request a call, the body as it is, the object's metadata as
// JSON in a header. The host answers at PATH (bench/day-entry.js, `serveR2`).

export const PATH = "/__bench/r2";
const H_OP = "x-bench-r2-op";
const H_ARGS = "x-bench-r2-args";
const H_META = "x-bench-r2-object";

/** An R2Object as plain data (what crosses the process boundary). */
function plain(o) {
  if (!o) return null;
  return {
    key: o.key,
    version: o.version,
    size: o.size,
    etag: o.etag,
    httpEtag: o.httpEtag,
    uploaded: o.uploaded instanceof Date ? o.uploaded.toISOString() : o.uploaded,
    httpMetadata: o.httpMetadata ?? {},
    customMetadata: o.customMetadata ?? {},
    range: o.range,
  };
}

/** The R2Object shape again on the Worker's side, with `writeHttpMetadata`. */
function revive(p) {
  if (!p) return null;
  return {
    ...p,
    uploaded: new Date(p.uploaded),
    writeHttpMetadata(headers) {
      const m = p.httpMetadata ?? {};
      if (m.contentType) headers.set("content-type", m.contentType);
      if (m.contentLanguage) headers.set("content-language", m.contentLanguage);
      if (m.contentDisposition) headers.set("content-disposition", m.contentDisposition);
      if (m.contentEncoding) headers.set("content-encoding", m.contentEncoding);
      if (m.cacheControl) headers.set("cache-control", m.cacheControl);
    },
  };
}

/** A bucket whose objects live behind `host` (a Fetcher to bench/services-host.mjs). */
export function remoteBucket(host) {
  const call = (op, args, body) =>
    host.fetch(`http://r2${PATH}`, { method: "POST", headers: { [H_OP]: op, [H_ARGS]: encodeURIComponent(JSON.stringify(args ?? null)) }, body });
  const json = async (op, args, body) => {
    const res = await call(op, args, body);
    const out = await res.json();
    if (out.error) throw new Error(out.error);
    return out.result;
  };
  return {
    async put(key, value, options) {
      const body = value == null ? null : typeof value === "string" ? value : value instanceof ReadableStream ? value : new Blob([value]);
      return revive(await json("put", { key, options: options ?? null }, body));
    },
    async get(key, options) {
      const res = await call("get", { key, options: options ?? null });
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (res.status !== 200) throw new Error((await res.json()).error);
      const meta = revive(JSON.parse(decodeURIComponent(res.headers.get(H_META) ?? "null")));
      let used = false;
      const take = () => {
        if (used) throw new TypeError("body already used");
        used = true;
        return res;
      };
      return {
        ...meta,
        get body() {
          return take().body;
        },
        get bodyUsed() {
          return used;
        },
        arrayBuffer: () => take().arrayBuffer(),
        text: () => take().text(),
        json: () => take().json(),
        blob: () => take().blob(),
        bytes: async () => new Uint8Array(await take().arrayBuffer()),
      };
    },
    async head(key) {
      return revive(await json("head", { key }));
    },
    async delete(keys) {
      await json("delete", { keys });
    },
    async list(options) {
      const r = await json("list", { options: options ?? null });
      return { ...r, objects: r.objects.map(revive) };
    },
    createMultipartUpload() {
      throw new Error("bench/r2-remote.js: multipart uploads are not served apart");
    },
    resumeMultipartUpload() {
      throw new Error("bench/r2-remote.js: multipart uploads are not served apart");
    },
  };
}

/** The host's side: runs the call a remoteBucket sent on the local bucket. */
export async function serveR2(request, env) {
  const op = request.headers.get(H_OP);
  const args = JSON.parse(decodeURIComponent(request.headers.get(H_ARGS) ?? "null")) ?? {};
  const bucket = env.MEDIA;
  try {
    if (op === "put") {
      // A stream of unknown length cannot go to R2 as it is: the request's body is read (the bench's objects are small).
      const body = request.body ? await request.arrayBuffer() : null;
      return Response.json({ result: plain(await bucket.put(args.key, body, args.options ?? undefined)) });
    }
    if (op === "get") {
      const o = await bucket.get(args.key, args.options ?? undefined);
      if (!o) return new Response(null, { status: 404 });
      // R2's conditional get answers an object without a body when the condition fails
      const body = "body" in o ? o.body : null;
      return new Response(body, { headers: { [H_META]: encodeURIComponent(JSON.stringify(plain(o))) } });
    }
    if (op === "head") return Response.json({ result: plain(await bucket.head(args.key)) });
    if (op === "delete") {
      await bucket.delete(args.keys);
      return Response.json({ result: null });
    }
    if (op === "list") {
      const r = await bucket.list(args.options ?? undefined);
      return Response.json({ result: { ...r, objects: r.objects.map(plain) } });
    }
    return Response.json({ error: `unknown R2 operation ${op}` }, { status: 400 });
  } catch (e) {
    return Response.json({ error: e instanceof Error ? e.message : String(e) }, { status: 500 });
  }
}
