// Reads near the user: every request's D1 access goes through one D1 session (the Sessions API,
// `env.DB.withSession(constraintOrBookmark)`), so with read replication on, its reads may be served by a replica
// while its writes go to the primary, and all its queries are sequentially consistent (a write is visible to the
// request's later reads). Which point a request starts from is decided here; docs/architecture.md, "Reads and
// replicas", has the table per endpoint and the reasons.
//
// The bookmark travels as Cloudflare documents it: the response header `x-d1-bookmark` (every response whose
// session has one), which a client may send back, and for the browser pages a cookie. What a client sends back is
// never handed to D1 as is: D1 only ever receives a constraint or a bookmark D1 itself gave this isolate (`vouch`).
// A malformed value is ignored; a well-formed one newer than anything this isolate has seen (a bookmark written
// through another isolate, or a forged one) starts the session on the primary, which is at least as new as any
// real bookmark. So a hostile value can cost one read on the primary, never an error.

export const BOOKMARK_HEADER = "x-d1-bookmark";
const COOKIE = "tern_d1b";
/** An hour; a signed-in browser whose cookie has gone reads from the primary until the next answer sets it again. */
const COOKIE_MAX_AGE = 3600;

export type SessionStart = "first-primary" | "first-unconstrained" | (string & {});

/**
 * D1's bookmark: four hex groups, 8-8-8-32 (`wrangler d1 time-travel info` prints one; local D1 answers the same
 * shape). Bookmarks sort lexicographically from oldest to newest.
 */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** A client-supplied bookmark, or null when absent or malformed (then it is ignored). */
export function parseBookmark(v: string | null | undefined): string | null {
  if (v?.length !== 59) return null;
  const b = v.toLowerCase();
  return BOOKMARK.test(b) ? b : null;
}

const newer = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : b > a ? b : a);

/** This isolate's newest bookmark from D1, and the bookmark after its latest write request. Never client input. */
let highWater: string | null = null;
let writeFloor: string | null = null;

/**
 * Where a session may start for a client that says it has seen `b`: a bookmark D1 gave this isolate that is at
 * least as new as `b` (so the session is at least as new as what the client saw), else the primary.
 */
export function vouch(b: string): SessionStart {
  if (writeFloor !== null && b <= writeFloor) return writeFloor;
  if (highWater !== null && b <= highWater) return highWater;
  return "first-primary";
}

/** What `startFor` needs to know about a request; `retry` is the primary re-check of a replica's 404 (app.ts). */
export interface RequestFacts {
  method: string;
  /** A bearer token (header, or `access_token` / WebSocket protocol for the streaming socket) or a session cookie. */
  credentials: boolean;
  /** The client's bookmark: the `x-d1-bookmark` header, else the bookmark cookie. Unparsed. */
  clientBookmark: string | null;
  retry?: boolean;
}

export const isSafeMethod = (m: string) => m === "GET" || m === "HEAD" || m === "OPTIONS";

/**
 * The session's starting point for a request:
 * - writes (POST, PUT, PATCH, DELETE) and the re-check of a 404: the primary ("first-primary"). A write's reads
 *   decide what it writes, so they must not come from a replica behind the primary;
 * - reads that bring a well-formed bookmark: `vouch(bookmark)`;
 * - reads with credentials (a Mastodon client's bearer token, a signed-in browser without the bookmark cookie):
 *   the primary. Such clients send no bookmark, may have written through another isolate a moment ago, and their
 *   token may be seconds old;
 * - anonymous reads (federation, public pages and API, media): anywhere, but never older than this isolate's own
 *   latest write (`writeFloor`), so the isolate that made a change reads it back.
 */
export function startFor(r: RequestFacts): SessionStart {
  if (r.retry || !isSafeMethod(r.method)) return "first-primary";
  const b = parseBookmark(r.clientBookmark);
  if (b) return vouch(b);
  if (r.credentials) return "first-primary";
  return writeFloor ?? "first-unconstrained";
}

/** Records where a request's session ended: raises the isolate's marks (a write request raises the write floor). */
export function noteBookmark(bookmark: string | null, method: string): void {
  if (bookmark === null || !parseBookmark(bookmark)) return;
  highWater = newer(highWater, bookmark);
  if (!isSafeMethod(method)) writeFloor = newer(writeFloor, bookmark);
}

const SESSION_COOKIE = /(?:^|;\s*)(?:__Host-)?tern_session=/;
const BOOKMARK_COOKIE = /(?:^|;\s*)(?:__Host-)?tern_d1b=([^;]*)/;

/** The facts `startFor` needs, read from the request. */
export function requestFacts(req: Request, bearer: boolean, retry = false): RequestFacts {
  const cookie = req.headers.get("cookie");
  const header = req.headers.get(BOOKMARK_HEADER);
  const credentials =
    bearer ||
    (cookie !== null && SESSION_COOKIE.test(cookie)) ||
    // The streaming socket may carry its token in the query or the WebSocket protocol (src/api/v1/instance/streaming.ts).
    req.url.includes("access_token=") ||
    req.headers.has("sec-websocket-protocol");
  const fromCookie = header === null && cookie !== null ? (BOOKMARK_COOKIE.exec(cookie)?.[1] ?? null) : null;
  return { method: req.method, credentials, clientBookmark: header ?? fromCookie, retry };
}

/**
 * After the handler: the session's bookmark goes out in `x-d1-bookmark`, and to a browser with a session (or one
 * being signed in by this response) in the bookmark cookie, so its next page reads at least what this one wrote.
 */
/** What sendBookmark needs of a request's context (Hono's Context has it): the request's cookie and URL, the response. */
export interface BookmarkExchange {
  req: { header(name: string): string | undefined; url: string };
  res: Response;
}

export function sendBookmark(c: BookmarkExchange, bookmark: string | null): void {
  if (bookmark === null || !parseBookmark(bookmark)) return;
  const res = c.res;
  try {
    res.headers.set(BOOKMARK_HEADER, bookmark);
    const cookie = c.req.header("cookie");
    const signedIn =
      (cookie !== undefined && SESSION_COOKIE.test(cookie)) || /(?:^|,\s*)(?:__Host-)?tern_session=[^;,]/.test(res.headers.get("set-cookie") ?? "");
    if (!signedIn) return;
    const https = new URL(c.req.url).protocol === "https:";
    const name = https ? `__Host-${COOKIE}` : COOKIE;
    res.headers.append("set-cookie", `${name}=${bookmark}; Max-Age=${COOKIE_MAX_AGE}; Path=/; HttpOnly; SameSite=Lax${https ? "; Secure" : ""}`);
  } catch {
    // A response with immutable headers (a fetched one passed through) goes out without the bookmark.
  }
}
