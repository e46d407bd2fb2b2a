// The ONE outbound fetch for everything remote (actors, keys, objects, WebFinger, media, push endpoints). Workers'
// fetch() gives no DNS hook, so the guard validates the URL itself (security §2.1 "Workers translation"): http(s)
// only, no userinfo, no CR/LF, IP literals in every spelling checked against the denylist (an IPv6 address carrying an
// IPv4 one, mapped, NAT64, 6to4, Teredo …, is judged by that address or refused whole: ip.ts), names of this machine or of
// an internal network refused in every spelling (trailing dots, single labels, internal suffixes, metadata services,
// wildcard-DNS names that spell a private address: ip.ts internalNameReason),
// ports 80/443 only, our own host never fetched, redirects followed by hand (≤3, each re-validated, no https→http
// downgrade), 30 s total, and the body counted while streaming (decompressed) against a cap.
// `allowLoopback` (config ALLOW_LOOPBACK_FETCH, off by default) lets tests federate between processes on 127.0.0.1.
import { cappedStream, readCapped } from "../lib/http/capped-body";
import { canonicalHostname, internalNameReason, isBlockedAddress, isIpLiteral, isLoopback } from "./ip";
import { type Outgoing, outgoingOf, type Signer } from "./outgoing";

const decoder = new TextDecoder();

export class FetchRefused extends Error {
  constructor(readonly reason: string) {
    super(`fetch refused: ${reason}`);
  }
}

export interface SafeFetchOptions {
  ownHosts?: string[];
  allowLoopback?: boolean;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  headers?: Record<string, string>;
  method?: "GET" | "POST";
  body?: string | Uint8Array;
  /** Signs each hop (URLs change on redirects, and so must the signature). */
  sign?: Signer;
  /**
   * Double knocking (rfc9421.ts), in place of `sign`: each hop is signed `first`; a 400 or 401 is signed `second` and
   * sent once more (if that second request cannot be made, the first answer stands); `done` is told which one answered.
   */
  knock?: (host: string) => Promise<{
    first: Signer;
    second: Signer;
    done: (usedSecond: boolean, status: number) => Promise<void>;
  }>;
  /** Keep the first `maxBytes` and stop reading, instead of failing (link previews only need a page's head). */
  truncate?: boolean;
  /**
   * Asked before the body is read: false leaves it unread (an empty body is returned), e.g. not HTML. `false` itself:
   * never read (a delivery only needs the status; its response's headers are not even looked at).
   */
  wantBody?: false | ((status: number, headers: Headers) => boolean);
  /**
   * The deadline, when the caller keeps one for several fetches (a delivery pack: one timer for its inboxes, cleared
   * when the pack is done), instead of a timer of `timeoutMs` for this fetch alone.
   */
  signal?: AbortSignal;
}

/** Validates a URL for outbound use; throws FetchRefused. */
export function checkUrl(raw: string, opts: Pick<SafeFetchOptions, "ownHosts" | "allowLoopback"> = {}): URL {
  if (raw.length > 2048) throw new FetchRefused("URL too long");
  if (/[\r\n\t\0]|%0[ad]|%00/i.test(raw)) throw new FetchRefused("control characters in URL");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new FetchRefused("invalid URL");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new FetchRefused("scheme not allowed");
  if (u.username || u.password || raw.slice(0, raw.indexOf(u.host) + 1).includes("@")) throw new FetchRefused("userinfo not allowed");
  // One spelling from here on: `localhost.`, `Intranet.` and `127.0.0.1.` are judged (and fetched) without the dot.
  const host = canonicalHostname(u.hostname);
  if (!host) throw new FetchRefused("invalid URL");
  if (host !== u.hostname) u.hostname = host;
  const loopbackOk = !!opts.allowLoopback && isLoopback(host);
  if (!loopbackOk) {
    // Every bracketed host is an IPv6 literal: one the parser in ip.ts cannot read is refused, not judged as a name.
    if (isIpLiteral(host) || host.startsWith("[") || /^[\d.]+$/.test(host)) {
      if (isBlockedAddress(host)) throw new FetchRefused("address not allowed");
    } else {
      const why = internalNameReason(host);
      if (why) throw new FetchRefused(why);
    }
    if (u.port && u.port !== "80" && u.port !== "443") throw new FetchRefused("port not allowed");
  }
  const hostPort = u.port ? `${host}:${u.port}` : host;
  if (opts.ownHosts?.some((h) => canonicalHostname(h) === hostPort)) throw new FetchRefused("own host");
  return u;
}

/** Rejects when `signal` aborts, whatever `work` does: the deadline holds even if a transport ignores the signal. */
function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new FetchRefused("timed out"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new FetchRefused("timed out"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(signal.aborted ? new FetchRefused("timed out") : e);
      },
    );
  });
}

/** The first `limit` bytes of a stream; the rest is never read. */
async function readUpTo(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const out = new Uint8Array(limit);
  let size = 0;
  while (size < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = Math.min(value.byteLength, limit - size);
    out.set(value.subarray(0, take), size);
    size += take;
  }
  await reader.cancel().catch(() => {});
  return out.slice(0, size);
}

async function readResponseCapped(res: Response, maxBytes: number, signal: AbortSignal, truncate = false): Promise<Uint8Array> {
  if (truncate) return withDeadline(readUpTo(res.body, maxBytes), signal);
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new FetchRefused("response too large");
  }
  // A slow body (one byte every few seconds, D4) is cut off by the same total deadline as the request.
  return withDeadline(
    readCapped(res.body, maxBytes, () => new FetchRefused("response too large")),
    signal,
  ).catch(async (e) => {
    await res.body?.cancel().catch(() => {});
    throw e;
  });
}

export interface SafeResponse {
  status: number;
  headers: Headers;
  url: string;
  body: Uint8Array;
  text(): string;
}

const USER_AGENT = "Tern/0.1 (+https://github.com/)";

/**
 * The answer, its headers and final URL made only when asked: each is a runtime object (the collector keeps a weak
 * handle for each until a young-generation collection looks at it), and a delivery reads the status alone.
 */
function answer(res: Response, url: URL, body: Uint8Array): SafeResponse {
  return {
    status: res.status,
    get headers() {
      return res.headers;
    },
    get url() {
      return url.toString();
    },
    body,
    text: () => decoder.decode(body),
  };
}

export async function safeFetch(rawUrl: string, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  const signal = opts.signal ?? AbortSignal.timeout(opts.timeoutMs ?? 30_000);
  const { res, url } = await openGuarded(rawUrl, opts, signal);
  if (opts.wantBody === false || (opts.wantBody && !opts.wantBody(res.status, res.headers))) {
    await res.body?.cancel().catch(() => {});
    return answer(res, url, new Uint8Array(0));
  }
  return answer(res, url, await readResponseCapped(res, opts.maxBytes ?? 1024 * 1024, signal, opts.truncate));
}

/** A guarded answer whose body is left as a stream, for files too large to hold in memory (remote media into R2). */
export interface StreamedResponse {
  status: number;
  headers: Headers;
  url: string;
  /** Errors with FetchRefused("response too large") once more than `maxBytes` arrived, and with "timed out" at the deadline. */
  body: ReadableStream<Uint8Array> | null;
  cancel(): Promise<void>;
}

/**
 * safeFetch without reading the body: the same URL checks, redirects and deadline (which also ends a body read too
 * slowly). A declared Content-Length above `maxBytes` is refused before anything is read.
 */
export async function safeFetchStream(rawUrl: string, opts: SafeFetchOptions = {}): Promise<StreamedResponse> {
  const signal = opts.signal ?? AbortSignal.timeout(opts.timeoutMs ?? 30_000);
  const { res, url } = await openGuarded(rawUrl, opts, signal);
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new FetchRefused("response too large");
  }
  const capped = cappedStream(res.body, maxBytes, () => new FetchRefused("response too large")).body;
  const body = capped?.pipeThrough(deadlineStream(signal)) ?? null;
  return { status: res.status, headers: res.headers, url: url.toString(), body, cancel: async () => body?.cancel().catch(() => {}) };
}

/** Passes chunks through until `signal` aborts, then errors with "timed out" (a body trickling past the deadline). */
function deadlineStream(signal: AbortSignal): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, ctl) {
      if (signal.aborted) ctl.error(new FetchRefused("timed out"));
      else ctl.enqueue(chunk);
    },
  });
}

/** Sends the request (signed or knocked as asked) and follows redirects by hand, each hop checked; the body is unread. */
async function openGuarded(rawUrl: string, opts: SafeFetchOptions, signal: AbortSignal): Promise<{ res: Response; url: URL }> {
  const maxRedirects = opts.maxRedirects ?? 3;
  let url = checkUrl(rawUrl, opts);
  for (let hop = 0; ; hop++) {
    // Plain data until fetch() (outgoing.ts): signing adds headers, and no Request or Headers object is made for it.
    const build = () => outgoingOf(url, opts.method ?? "GET", { "user-agent": USER_AGENT, ...(opts.headers ?? {}) }, opts.body);
    const send = async (o: Outgoing) => {
      try {
        return await withDeadline(fetch(o.url, { method: o.method, headers: o.headers, body: o.body, redirect: "manual", signal }), signal);
      } catch (e) {
        if (e instanceof FetchRefused) throw e;
        throw new FetchRefused(`network error: ${(e as Error).message}`);
      }
    };
    let res: Response;
    if (opts.knock) {
      const k = await opts.knock(url.host);
      res = await send(await k.first(build()));
      let usedSecond = false;
      if (res.status === 400 || res.status === 401) {
        const again = await k
          .second(build())
          .then(send)
          .catch(() => null);
        if (again) {
          await res.body?.cancel().catch(() => {});
          res = again;
          usedSecond = true;
        }
      }
      await k.done(usedSecond, res.status);
    } else {
      res = await send(opts.sign ? await opts.sign(build()) : build());
    }
    if (res.status >= 300 && res.status < 400 && res.headers.get("location")) {
      await res.body?.cancel().catch(() => {});
      if (hop >= maxRedirects) throw new FetchRefused("too many redirects");
      const next = checkUrl(new URL(res.headers.get("location")!, url).toString(), opts);
      if (url.protocol === "https:" && next.protocol === "http:") throw new FetchRefused("https to http downgrade");
      url = next;
      continue;
    }
    return { res, url };
  }
}

const AS_TYPES = ["application/activity+json", "application/ld+json"];

/** GETs an ActivityPub document: AS2 Accept, 200 + AS2 content type only (D6), JSON object only, 1 MB. */
export async function fetchActivityJson(url: string, opts: SafeFetchOptions = {}): Promise<{ json: Record<string, unknown>; finalUrl: string }> {
  const res = await safeFetch(url, {
    ...opts,
    headers: { accept: 'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"', ...(opts.headers ?? {}) },
  });
  if (res.status !== 200) throw new FetchRefused(`status ${res.status}`);
  const type = ((res.headers.get("content-type") ?? "").split(";")[0] ?? "").trim().toLowerCase(); // split yields at least one element
  if (!AS_TYPES.includes(type)) throw new FetchRefused(`content type ${type || "missing"}`);
  let json: unknown;
  try {
    json = JSON.parse(res.text());
  } catch {
    throw new FetchRefused("invalid JSON");
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) throw new FetchRefused("not a JSON object");
  return { json: json as Record<string, unknown>, finalUrl: res.url };
}
