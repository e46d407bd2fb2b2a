// /api/v1/streaming: the WebSocket (one socket, streams chosen with `stream`/`list`/`tag` in the query or with
// subscribe/unsubscribe messages), the server-sent event paths (/user, /public/local, /hashtag?tag= ...) and /health.
// The Worker authenticates (Authorization: Bearer, else `access_token` in the query or the Sec-WebSocket-Protocol
// header, which is echoed back in the 101), refuses what needs a user before upgrading, and hands the connection to
// the account's hub object (src/streaming/hub.ts); errors are worded as Mastodon's streaming server words them.
import { routeGroup } from "../../../route-group";
import type { Ctx } from "../../../context";
import { ApiError, badRequest, notFound, unauthorized } from "../../../lib/http/errors";
import { clientIp, rateLimitConfig } from "../../../http/rate-limit";
import { loadViewer, type Viewer } from "../../../oauth/viewer";
import { ANON_SHARDS, anonHub, anonHubFor, type Session, userHub } from "../../../streaming/protocol";
import { hubStub } from "../../../streaming/streaming-do";
import { channelFromPath, firstParam, resolveStream, scopeBits } from "../../../streaming/streams";

const r = routeGroup();

/** Mastodon: `GET /api/v1/streaming/health` → 200 `OK` (text). */
r.get("/health", (c) => c.text("OK"));

r.get("/", (c) => (isUpgrade(c) ? webSocket(c) : Promise.reject(notFound())));
r.get("/*", (c) => (isUpgrade(c) ? webSocket(c) : eventStream(c)));

export default r;

/** The first subprotocol offered (Mastodon's server takes the header as the token; clients send just the token). */
function offeredProtocol(c: Ctx): string | null {
  const first = (c.req.header("sec-websocket-protocol") ?? "").split(",")[0]?.trim();
  return first || null;
}

const isUpgrade = (c: Ctx) => (c.req.header("upgrade") ?? "").toLowerCase() === "websocket";

/**
 * Longest value passed on from the query for a tag or list parameter: longer than any the hub accepts (a tag is at
 * most 400 bytes: streams.ts), so the cut never changes an accepted one; the hub checks them properly.
 */
const MAX_PARAM = 512;

interface Who {
  session: Omit<Session, "hub">;
  /** No token at all (as opposed to an app token, which is anonymous too). */
  tokenless: boolean;
}

/**
 * The connection's identity. A bad or revoked token, or one whose user may not sign in (disabled, suspended, not
 * approved), is 401 whatever the stream; an app token (no user) streams like a signed-out client.
 */
async function identify(c: Ctx, protocol: string | null): Promise<Who> {
  let viewer: Viewer | null;
  if (c.req.header("authorization")) {
    viewer = c.get("viewer");
    if (!viewer) throw unauthorized("Invalid access token");
  } else {
    const token = c.req.query("access_token") || protocol;
    if (!token) return { session: { acct: null, tok: null, sc: 0 }, tokenless: true };
    viewer = await loadViewer(c.get("db"), token);
    if (!viewer) throw unauthorized("Invalid access token");
  }
  if (!viewer.user || !viewer.account) return { session: { acct: null, tok: null, sc: 0 }, tokenless: false };
  if (viewer.user.disabled || viewer.account.suspendedAt || !viewer.user.approved) throw unauthorized("Invalid access token");
  return { session: { acct: viewer.account.id, tok: viewer.tokenId, sc: scopeBits(viewer.scopes) }, tokenless: false };
}

/** Signed-out access follows the public-preview setting, as the REST public timelines do. */
function requireAccessAllowed(c: Ctx, who: Who) {
  if (!who.session.acct && !c.get("config").publicPreview) {
    throw unauthorized(who.tokenless ? "Missing access token" : "This API requires an authenticated user");
  }
}

/**
 * The connection's session and hub: its account's hub, else the `anon` hub of its IP (CF-Connecting-IP, IPv6 by
 * /64), where that IP's share of connections and subscription changes is counted; clients on the rate-limit safelist
 * (local tools, the benchmark) are spread at random and not counted per IP.
 */
function sessionFor(c: Ctx, who: Who): Session {
  if (who.session.acct) return { hub: userHub(who.session.acct), ...who.session };
  const raw = (c.req.header("cf-connecting-ip") ?? "").trim().toLowerCase();
  if (rateLimitConfig(c.env).safelist.has(raw)) return { hub: anonHub(Math.floor(Math.random() * ANON_SHARDS)), ...who.session };
  const ip = clientIp(c);
  return { hub: anonHubFor(ip), ...who.session, ip };
}

function hubRequest(path: "ws" | "sse", session: Session, params: Record<string, string | undefined>, upgrade: boolean): Request {
  const url = new URL(`https://streaming.internal/${path}`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v.slice(0, MAX_PARAM));
  const headers: Record<string, string> = { "x-tern-session": JSON.stringify(session) };
  if (upgrade) headers.upgrade = "websocket";
  return new Request(url, { headers });
}

async function webSocket(c: Ctx): Promise<Response> {
  // Browsers abort the handshake unless the offered subprotocol (masto.js puts the token there) comes back.
  const protocol = offeredProtocol(c);
  const who = await identify(c, protocol);
  requireAccessAllowed(c, who);
  const stream = firstParam(c.req.queries("stream"));
  // A stream named in the query that needs a user is refused before upgrading; other problems with it (unknown,
  // missing tag, someone else's list) come as an error message on the socket, as Mastodon sends them.
  if (stream && !who.session.acct) {
    const r = resolveStream(stream, {}, null, 0);
    if (!r.ok && r.err.error === "Missing access token") throw unauthorized(who.tokenless ? "Missing access token" : "This API requires an authenticated user");
  }
  const session = sessionFor(c, who);
  const res = await hubStub(c.env, session.hub).fetch(
    hubRequest("ws", session, { stream, tag: firstParam(c.req.queries("tag")), list: firstParam(c.req.queries("list")) }, true),
  );
  if (res.status !== 101 || !res.webSocket) return new Response(res.body, { status: res.status, headers: res.headers });
  return new Response(null, { status: 101, webSocket: res.webSocket, headers: protocol ? { "sec-websocket-protocol": protocol } : {} });
}

async function eventStream(c: Ctx): Promise<Response> {
  const path = c.req.path.replace(/^\/api\/v1\/streaming\/?/, "");
  const channel = channelFromPath(path, c.req.query("only_media"));
  if (!channel) throw badRequest("Unknown channel requested");
  const who = await identify(c, offeredProtocol(c));
  const tag = firstParam(c.req.queries("tag"));
  const list = firstParam(c.req.queries("list"));
  const resolved = resolveStream(channel, { tag, list }, who.session.acct, who.session.sc);
  if (!resolved.ok) {
    const msg = resolved.err.error === "Missing access token" && !who.tokenless ? "This API requires an authenticated user" : resolved.err.error;
    throw new ApiError(resolved.err.status, msg);
  }
  requireAccessAllowed(c, who);
  const session = sessionFor(c, who);
  const res = await hubStub(c.env, session.hub).fetch(hubRequest("sse", session, { stream: channel, tag, list }, false));
  return new Response(res.body, { status: res.status, headers: res.headers });
}
