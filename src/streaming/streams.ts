// Mastodon's streaming channels (streaming/index.js): their names, who may subscribe, the parameters they take, and
// the key an event is routed by. A subscription keeps the parameter as the client sent it, because the `stream` array
// of every event echoes it (["hashtag", "Foo"], ["list", "12"]) and masto.js drops events whose array differs from
// what it asked for; routing uses the normalised key (`hashtag:foo`, `list:12`).
import { parseId } from "../lib/text/ids";
import { normalizeTag } from "../lib/text/text";

/** Channels that need no user (Mastodon's PUBLIC_CHANNELS): no scope is checked for them. */
const PUBLIC_STREAM_NAMES = [
  "public",
  "public:media",
  "public:local",
  "public:local:media",
  "public:remote",
  "public:remote:media",
  "hashtag",
  "hashtag:local",
] as const;

export const STREAM_NAMES = ["user", "user:notification", ...PUBLIC_STREAM_NAMES, "list", "direct"] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

export const PUBLIC_STREAMS: ReadonlySet<string> = new Set(PUBLIC_STREAM_NAMES);

/** One subscription of a connection: stream name, the parameter as sent (tag or list id), routing key. */
export interface Sub {
  s: StreamName;
  p?: string;
  k: string;
}

/** The token's read scopes as bits (what a connection keeps in its 2 KB attachment). */
export const SCOPE_READ = 1;
export const SCOPE_READ_STATUSES = 2;
export const SCOPE_READ_NOTIFICATIONS = 4;

export function scopeBits(scopes: Iterable<string>): number {
  let bits = 0;
  for (const s of scopes) {
    if (s === "read") bits |= SCOPE_READ;
    else if (s === "read:statuses") bits |= SCOPE_READ_STATUSES;
    else if (s === "read:notifications") bits |= SCOPE_READ_NOTIFICATIONS;
  }
  return bits;
}

/** Whether the `user` stream of a connection carries notifications (Mastodon: read or read:notifications). */
export const seesNotifications = (bits: number) => (bits & (SCOPE_READ | SCOPE_READ_NOTIFICATIONS)) !== 0;

/** A refusal as Mastodon's streaming server words it: {"error": ..., "status": ...} in a socket, HTTP status for SSE. */
export interface StreamError {
  status: 400 | 401 | 429 | 503;
  error: string;
}

/** A tag name in Tern is at most this many characters once normalised (services/statuses/tags.ts): longer ones never match. */
const MAX_TAG_LENGTH = 100;
/** Longest tag parameter taken, in UTF-8 bytes (the `stream` array of every event echoes it as sent). */
const MAX_TAG_PARAM_BYTES = 400;

/** UTF-8 length of a string (lone surrogates count as U+FFFD would: 3). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * An upper bound of the bytes a text takes where the runtime counts them: UTF-8 in messages, V8's serialisation in
 * WebSocket attachments and Durable Object storage (a string is stored as Latin-1, or as UTF-16 as soon as one of its
 * characters is not Latin-1). Characters never fit the limits, which are in bytes: a CJK character is 3 bytes.
 */
export function runtimeSize(text: string): number {
  return Math.max(utf8Length(text), /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length);
}

export type Resolved = { ok: true; sub: Sub } | { ok: false; err: StreamError };

const fail = (status: 400 | 401, error: string): Resolved => ({ ok: false, err: { status, error } });

export const TAG_TOO_LONG = "Tag name too long";

/** The first value of a parameter that may arrive as a list (`stream[]=a&stream[]=b`, or a JSON array). */
export function firstParam(v: unknown): string | undefined {
  const x = Array.isArray(v) ? v[0] : v;
  if (typeof x === "string") return x;
  if (typeof x === "number" && Number.isSafeInteger(x)) return String(x);
  return undefined;
}

/**
 * Checks a subscription request and gives its routing key, in Mastodon's order: known stream, a user and the token's
 * scope for non-public streams (read, or read:notifications for user:notification and read:statuses for the others),
 * then the parameter. List ownership needs the database and is checked by the caller.
 * `account`: the connection's account, null when anonymous (signed out or an app token).
 */
export function resolveStream(name: string | undefined, params: { tag?: unknown; list?: unknown }, account: string | null, scopes: number): Resolved {
  if (!name || !(STREAM_NAMES as readonly string[]).includes(name)) return fail(400, "Unknown stream type");
  const s = name as StreamName;
  if (!PUBLIC_STREAMS.has(s)) {
    if (!account) return fail(401, "Missing access token");
    const need = s === "user:notification" ? SCOPE_READ_NOTIFICATIONS : SCOPE_READ_STATUSES;
    if ((scopes & (SCOPE_READ | need)) === 0) return fail(401, "Access token does not have the required scopes");
  }
  if (s === "hashtag" || s === "hashtag:local") {
    const raw = firstParam(params.tag);
    if (!raw) return fail(400, "Missing tag name parameter");
    // A tag longer than any Tern keeps is refused rather than cut (a cut one would be another tag), in bytes.
    if (utf8Length(raw) > MAX_TAG_PARAM_BYTES) return fail(400, TAG_TOO_LONG);
    const tag = normalizeTag(raw);
    if (!tag) return fail(400, "Missing tag name parameter");
    if (tag.length > MAX_TAG_LENGTH) return fail(400, TAG_TOO_LONG);
    return { ok: true, sub: { s, p: raw, k: s === "hashtag" ? `hashtag:${tag}` : `hashtag:local:${tag}` } };
  }
  if (s === "list") {
    const raw = firstParam(params.list);
    if (!raw) return fail(400, "Missing list name parameter");
    const id = parseId(raw);
    // An id that cannot exist is a list nobody owns.
    if (!id) return fail(401, "Not authorized to stream this list");
    return { ok: true, sub: { s, p: raw, k: `list:${id}` } };
  }
  return { ok: true, sub: { s, k: s } };
}

export const listIdOf = (key: string): string | null => (key.startsWith("list:") ? key.slice(5) : null);

/** The `stream` array of an event for this subscription. */
export function streamArray(sub: Sub): string[] {
  return sub.p !== undefined ? [sub.s, sub.p] : [sub.s];
}

/** Keys routed per account (the account's own object receives them directly). */
export function isAccountKey(key: string): boolean {
  return key === "user" || key === "user:notification" || key === "direct" || key.startsWith("list:");
}

const TRUTHY_OFF = new Set(["", "0", "f", "false", "off", "no"]);
const truthy = (v: string | undefined) => v !== undefined && !TRUTHY_OFF.has(v.toLowerCase());

/** SSE paths (after /api/v1/streaming/) → channel name; `only_media` picks the :media variants as Mastodon does. */
export function channelFromPath(path: string, onlyMedia: string | undefined): StreamName | null {
  const media = truthy(onlyMedia);
  switch (path.replace(/\/+$/, "")) {
    case "user":
      return "user";
    case "user/notification":
      return "user:notification";
    case "public":
      return media ? "public:media" : "public";
    case "public/media":
      return "public:media";
    case "public/local":
      return media ? "public:local:media" : "public:local";
    case "public/local/media":
      return "public:local:media";
    case "public/remote":
      return media ? "public:remote:media" : "public:remote";
    case "public/remote/media":
      return "public:remote:media";
    case "hashtag":
      return "hashtag";
    case "hashtag/local":
      return "hashtag:local";
    case "list":
      return "list";
    case "direct":
      return "direct";
    default:
      return null;
  }
}
