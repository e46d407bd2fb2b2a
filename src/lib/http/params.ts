// One parser for every way a client sends parameters: query string, form-urlencoded, multipart, JSON, with Rails
// brackets (`media_ids[]`, `fields_attributes[0][name]`, `home[last_read_id]`). The result is a plain nested object
// that route schemas (zod) validate. Body size and JSON nesting are capped before parsing (security A11, A12, A25).
import type { Context } from "hono";
import * as z from "zod";
import { cappedStream, readCapped } from "./capped-body";
import { ApiError, badRequest, notFound, validationFailed } from "./errors";
import { parseId } from "../text/ids";
import { requestSlot } from "./request-slot";

export type Params = Record<string, unknown>;

export const MAX_JSON_BODY = 1024 * 1024;
const MAX_DEPTH = 32;
/**
 * Parameters per request, whatever their shape: pairs of a query, form or multipart body, and array items plus object
 * members of a JSON body. Counted while parsing, so an over-long list (200,000 `media_ids`) is refused before any
 * route, schema or query sees it. The largest legitimate list (`id[]` of relationships, capped at 40 later) is far below.
 */
export const MAX_PARAMS = 1000;
const tooManyParams = () => badRequest("Too many parameters");

function setPath(target: Params, key: string, value: unknown): void {
  const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!m) {
    target[key] = value;
    return;
  }
  // Every group here always participates (the bracket run may be empty), so the fallbacks never apply.
  const parts = [m[1] ?? "", ...Array.from((m[2] ?? "").matchAll(/\[([^[\]]*)\]/g), (x) => x[1] ?? "")];
  if (parts.length > 6) return;
  // A walk over nested objects and arrays being built: each step may be either, checked as it goes.
  // biome-ignore lint/suspicious/noExplicitAny: the node is an object or an array, narrowed at each use below
  let node: any = target;
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    const nextIsArray = !last && parts[i + 1] === "";
    if (part === "") {
      // `a[]=x`: append to an array
      if (!Array.isArray(node)) return;
      if (last) node.push(value);
      else {
        const child = nextIsArray ? [] : {};
        node.push(child);
        node = child;
      }
      continue;
    }
    if (Array.isArray(node)) return;
    if (last) {
      if (Array.isArray(node[part])) node[part].push(value);
      else if (part in node && !part.endsWith("]")) node[part] = value;
      else node[part] = value;
    } else {
      if (node[part] === undefined || typeof node[part] !== "object" || node[part] === null) {
        node[part] = nextIsArray ? [] : {};
      }
      node = node[part];
    }
  }
}

/** Flat key/value pairs (query or form) → nested object, Rails style. */
export function nestPairs(pairs: Iterable<[string, unknown]>): Params {
  const out: Params = Object.create(null);
  let n = 0;
  for (const [k, v] of pairs) {
    if (++n > MAX_PARAMS) throw tooManyParams();
    setPath(out, k, v);
  }
  return { ...out };
}

/**
 * One pass over JSON text, before JSON.parse: the nesting depth, and (when `maxEntries` is given) the number of array
 * items and object members in the whole document, counted by their separating commas. Returns the limit exceeded.
 */
function jsonShapeExceeds(text: string, maxDepth: number, maxEntries: number): "depth" | "entries" | null {
  let depth = 0;
  let commas = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++;
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 34) inString = true;
    else if (ch === 44) {
      if (++commas >= maxEntries) return "entries";
    } else if (ch === 91 || ch === 123) {
      if (++depth > maxDepth) return "depth";
    } else if (ch === 93 || ch === 125) depth--;
  }
  return null;
}

/**
 * JSON text with every integer literal of 16 digits or more turned into a string literal of the same digits, so
 * JSON.parse keeps it exact: clients send snowflake ids (~2^57) as JSON numbers, which a double would round to a
 * neighbouring id (Rails keeps them exact). Ids are read as strings anyway; shorter integers are exact as numbers.
 * Text without such a literal is returned as is (one regex test).
 */
export function quoteLongIntegers(text: string): string {
  if (!/\d{16}/.test(text)) return text;
  // String literals are matched whole (and kept), so digits inside them are never touched.
  return text.replace(JSON_STRING_OR_NUMBER, (token, fraction, exponent) =>
    token[0] !== '"' && !fraction && !exponent && token.replace("-", "").length >= 16 ? `"${token}"` : token,
  );
}

const JSON_STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?\d+(\.\d+)?([eE][+-]?\d+)?/g;

/** Parses JSON text with a nesting cap, long integers kept exact (as strings); throws 400 on bad JSON. */
export function parseJsonText(text: string, maxDepth = MAX_DEPTH, maxEntries = Infinity): unknown {
  const over = jsonShapeExceeds(text, maxDepth, maxEntries);
  if (over === "depth") throw badRequest("JSON nested too deeply");
  if (over === "entries") throw tooManyParams();
  try {
    return JSON.parse(quoteLongIntegers(text));
  } catch {
    throw badRequest("Invalid JSON in request body");
  }
}

/** Reads a request body as text, refusing more than `limit` bytes even without a Content-Length. */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw new ApiError(413, "Payload too large");
  const all = await readCapped(req.body, limit, () => new ApiError(413, "Payload too large"));
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(all);
  } catch {
    throw unprocessableEncoding();
  }
}

function unprocessableEncoding() {
  return new ApiError(422, "Validation failed: Request body is not valid UTF-8");
}

/**
 * A multipart body passed through while its parts are counted: once more than `max` parts have started, the stream
 * errors (`over()` is then true), so workerd's FormData parser never builds a list longer than the parameter cap.
 * Parts are counted by their delimiter lines (`--boundary`), found across chunk edges.
 */
export function countMultipartParts(
  stream: ReadableStream<Uint8Array> | null,
  contentType: string,
  max = MAX_PARAMS,
): { body: ReadableStream<Uint8Array> | null; over: () => boolean } {
  const m = /boundary=(?:"([^"]{1,200})"|([^;\s]{1,200}))/i.exec(contentType);
  if (!stream || !m) return { body: stream, over: () => false };
  const delim = new TextEncoder().encode(`--${m[1] ?? m[2]}`);
  let tail = new Uint8Array(0);
  let parts = 0;
  let over = false;
  const body = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        const hay = new Uint8Array(tail.length + chunk.length);
        hay.set(tail);
        hay.set(chunk, tail.length);
        const lead = delim[0] ?? 0x2d; // every delimiter starts with "--"
        for (let i = hay.indexOf(lead); i >= 0 && i + delim.length <= hay.length; i = hay.indexOf(lead, i + 1)) {
          let j = 1;
          while (j < delim.length && hay[i + j] === delim[j]) j++;
          // The closing delimiter (`--boundary--`) is counted too: one more than the parts, hence max + 1.
          if (j === delim.length && ++parts > max + 1) {
            over = true;
            ctl.error(tooManyParams());
            return;
          }
        }
        tail = hay.slice(Math.max(0, hay.length - (delim.length - 1)));
        ctl.enqueue(chunk);
      },
    }),
  );
  return { body, over: () => over };
}

const cache = requestSlot<Promise<Params>>("params");

/**
 * All parameters of a request, query merged under body (the body wins), cached per request.
 * `maxBody` defaults to 1 MB; media routes pass their own limit.
 */
export function readParams(c: Context, maxBody = MAX_JSON_BODY): Promise<Params> {
  // Kept on the context (one per request: no route runs in a sub-app's fetch), not on the runtime's Request object.
  let p = cache.get(c);
  if (!p) {
    p = parseRequest(c.req.raw, c.req.url, maxBody);
    cache.set(c, p);
  }
  return p;
}

async function parseRequest(req: Request, url: string, maxBody: number): Promise<Params> {
  const query = nestPairs(new URL(url).searchParams.entries());
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (req.method === "GET" || req.method === "HEAD") {
    // Rails reads a JSON body on every method; some client libraries send GET parameters that way.
    if (!req.body || !(type.startsWith("application/json") || type.includes("+json"))) return query;
    const text = await readBodyText(req, MAX_JSON_BODY);
    if (text.trim() === "") return query;
    const parsed = parseJsonText(text, MAX_DEPTH, MAX_PARAMS);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? { ...query, ...(parsed as Params) } : query;
  }
  let body: Params = {};
  if (type.startsWith("multipart/form-data")) {
    const declared = Number(req.headers.get("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > maxBody) throw new ApiError(413, "Payload too large");
    if (!/boundary=/.test(type)) throw badRequest("Multipart body without a boundary");
    let form: FormData;
    // Counted while streaming: a chunked body has no Content-Length. The original header keeps the boundary's case.
    const counted = cappedStream(req.body, maxBody, () => new ApiError(413, "Payload too large"));
    const headers = { "content-type": req.headers.get("content-type") ?? type };
    const parts = countMultipartParts(counted.body, headers["content-type"]);
    try {
      form = await new Request(url, { method: req.method, headers, body: parts.body }).formData();
    } catch {
      if (counted.over()) throw new ApiError(413, "Payload too large");
      throw parts.over() ? tooManyParams() : badRequest("Malformed multipart body");
    }
    body = nestPairs(form.entries());
  } else {
    // A larger `maxBody` is for multipart uploads (avatars); JSON and form bodies stay at 1 MB (A11).
    const text = await readBodyText(req, Math.min(maxBody, MAX_JSON_BODY));
    if (text.trim() === "") body = {};
    else if (type.startsWith("application/json") || type.includes("+json")) {
      const parsed = parseJsonText(text, MAX_DEPTH, MAX_PARAMS);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new ApiError(422, "Validation failed: The request body must be a JSON object");
      }
      body = parsed as Params;
    } else if (type.startsWith("application/x-www-form-urlencoded") || type === "") {
      body = nestPairs(new URLSearchParams(text).entries());
    } else {
      // 400, not 415: security row A25 wants 400/422 for a JSON body sent as text/plain.
      throw badRequest(`Unsupported content type: ${type.split(";")[0]}`);
    }
  }
  return { ...query, ...body };
}

/** Validates parameters with a zod schema; failures are 422 with the field and message. */
export async function parse<T extends z.ZodTypeAny>(c: Context, schema: T, maxBody?: number): Promise<z.infer<T>> {
  const params = await readParams(c, maxBody);
  return parseWith(schema, params);
}

export function parseWith<T extends z.ZodTypeAny>(schema: T, params: unknown): z.infer<T> {
  const r = schema.safeParse(params);
  if (!r.success) {
    const issue = r.error.issues[0]!; // a failed parse always carries at least one issue
    const field = issue.path.join(".");
    throw validationFailed(field ? `${field} ${issue.message}` : issue.message);
  }
  return r.data;
}

// ---- zod building blocks with Mastodon's semantics ----

const FALSE_VALUES = new Set(["", "0", "f", "false", "off", "n", "no", "F", "FALSE", "False", "OFF", "N", "NO"]);

/** The spec's truthiness: f, 0, false, off and empty are false; presence alone is not true. */
export function truthy(v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return !FALSE_VALUES.has(v.trim());
  return undefined;
}

export const zBool = z.preprocess((v) => {
  if (v === undefined || v === null) return undefined;
  const b = truthy(v);
  return b === undefined ? v : b;
}, z.boolean().optional());

/** A string parameter with a cap; arrays and objects are refused (A13). */
export const zStr = (max: number) => z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string().max(max));

export const zId = z.preprocess((v) => (typeof v === "number" ? String(v) : v), z.string().max(25));

/** `x[]` parameters: a single value becomes a one-item array; capped. */
export const zArray = <T extends z.ZodTypeAny>(item: T, max: number) =>
  z.preprocess((v) => {
    if (v === undefined || v === null || v === "") return undefined;
    if (Array.isArray(v)) return v;
    if (typeof v === "object") return Object.values(v as object);
    return [v];
  }, z.array(item).max(max).optional());

/** Integers arriving as strings. */
export const zInt = z.preprocess((v) => {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v === "number") return Math.trunc(v);
  if (typeof v === "string" && /^-?\d{1,15}$/.test(v.trim())) return Number(v.trim());
  return v;
}, z.number().int().optional());

/** The `:id` (or another) path parameter as an id; anything that is not one is a 404, as Mastodon answers. */
export function pathId(c: Context, name = "id"): string {
  const id = parseId(c.req.param(name));
  if (!id) throw notFound();
  return id;
}
