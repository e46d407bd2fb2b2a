// A hub: the object that holds the connections of one account (name `user:<accountId>`) or a share of the signed-out
// ones (`anon:<n>`). WebSockets are accepted with the Hibernation API: between events the object is evicted from
// memory and costs nothing, each socket's state (who, which token, which scopes, which subscriptions) lives in its
// serialised attachment. Server-sent event streams are held in memory (they keep the object awake while open).
//
// Everything that changes or reads the connections runs on one chain, so subscriptions, deliveries and closes happen
// in the order they arrived, and the router is told the hub's shared stream keys after every change (with when the
// hub received the first subscription it adds, so the router hands over what it published for them meanwhile:
// router.ts). Account streams need no report: the router sends their events to the account's hub whenever it has
// connections, and the hub matches its sockets' subscriptions as they are when the event comes.
//
// Budgets: subscription changes that reach the router (a storage write there) are counted per connection and per
// owner (the signed-out client's IP, or the account), never per hub, so one client's flood does not refuse another's
// subscriptions; a signed-out IP's sockets share one `anon` hub (protocol.ts anonHubFor), where it holds at most
// MAX_ANON_CONNECTIONS_PER_IP of them.
import { and, eq, sql } from "drizzle-orm";
import { createDb, type DB } from "../db/client";
import { lists } from "../db/schema";
import { loadStatusBundle, renderStatusFrom, renderStatuses } from "../entities/statuses/status";
import type { FilterContext } from "../db/schema";
import type { Config, Env } from "../env";
import { type Conn, type Envelope, entry, type HubItem, type Session } from "./protocol";
import { routerStub, type HubState } from "./router";
import { sharedParts } from "./shared-render";
import {
  firstParam,
  isAccountKey,
  listIdOf,
  resolveStream,
  runtimeSize,
  seesNotifications,
  streamArray,
  type StreamError,
  type Sub,
  utf8Length,
} from "./streams";
import { accountPayloadFor, CACHE_MS, loadViewerState, sharedPayloadFor, type ViewerState } from "./viewer-state";
import { idList } from "../db/id-list";
import { unpadId } from "../lib/text/ids";

/** How often a hub with signed-in connections re-checks their tokens (revoked, login disabled, account suspended). */
export const TOKEN_CHECK_MS = 5 * 60 * 1000;
/** Mastodon's SSE heartbeat. */
export const SSE_HEARTBEAT_MS = 15_000;
export const MAX_CONNECTIONS_PER_HUB = 64;
export const MAX_ANON_CONNECTIONS_PER_HUB = 2000;
/** A signed-out client's share of its `anon` hub: connections from one IP (IPv6: one /64). */
export const MAX_ANON_CONNECTIONS_PER_IP = 64;
export const MAX_SUBSCRIPTIONS = 24;
/**
 * Changes to the hub's set of shared stream keys (each one costs the router a storage write) one connection may make
 * per minute; more are refused with an error message. Subscribing a key another connection of the hub already holds,
 * and account streams (user, list, direct), are not counted. In memory: an object woken from hibernation starts a
 * new window.
 */
export const MAX_CHANGES_PER_MINUTE = 120;
/** The same, for all the connections of one owner: a signed-out client's IP, or an account. */
export const MAX_OWNER_CHANGES_PER_MINUTE = 240;
/** A client message longer than this (UTF-8 bytes) is answered with an error (subscribe messages are tiny). */
export const MAX_CLIENT_MESSAGE = 4096;
/** serializeAttachment allows 2,048 bytes (of V8's serialisation: streams.ts runtimeSize bounds it). */
const MAX_ATTACHMENT = 2000;
/** A subscription the router refused: the instance's or the hub's bound on listened keys is reached (router.ts). */
export const STREAMS_FULL: StreamError = { status: 503, error: "Too many streams on this server, try again later" };
/** An event stream whose reader fell this many chunks behind is closed (the client reconnects and refetches). */
const MAX_SSE_BACKLOG = 256;

const enc = new TextEncoder();

interface SseConn {
  conn: Conn;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  timer: ReturnType<typeof setInterval> | null;
  open: boolean;
}

/** A status rendered for the hub's account: its JSON, and whether it is a direct one (the `direct` stream's rule). */
interface Rendered {
  json: string;
  direct: boolean;
}

type Target = { kind: "ws"; ws: WebSocket; conn: Conn } | { kind: "sse"; sse: SseConn; conn: Conn };

/** A fixed one-minute window of counted changes. */
interface Budget {
  start: number;
  count: number;
}

/** Counts one change in every budget, or in none when one of them is spent. */
function spend(budgets: { b: Budget; limit: number }[], now: number): boolean {
  for (const { b } of budgets) if (now - b.start >= 60_000) Object.assign(b, { start: now, count: 0 });
  if (budgets.some(({ b, limit }) => b.count >= limit)) return false;
  for (const { b } of budgets) b.count++;
  return true;
}

/** Who a connection's changes and connections are counted for, besides itself (none on the safelist). */
const ownerOf = (conn: Session): string | null => (conn.acct ? `acct:${conn.acct}` : conn.ip ? `ip:${conn.ip}` : null);

/** How an account stream shows a status: home (user and list streams, home filters) or unfiltered (direct). */
const contextOf = (key: string): FilterContext | undefined => (key === "direct" ? undefined : "home");
const renderKey = (statusId: string, acct: string, context: FilterContext | undefined, cfg: Config) => `${statusId}:${acct}:${context ?? ""}:${cfg.origin}`;

export class Hub {
  private chain: Promise<unknown> = Promise.resolve();
  private sse = new Set<SseConn>();
  private name: string | null = null;
  private viewer: ViewerState | null = null;
  /** The keys last told to the router (in memory only: after a wake the next change is always sent). */
  private synced: string | null = null;
  private seq = 0;
  /** Change budgets per connection (WebSocket) and per owner (ownerOf). */
  private connBudgets = new WeakMap<WebSocket, Budget>();
  private ownerBudgets = new Map<string, Budget>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {}

  private db(): DB {
    return createDb(this.env.DB);
  }

  /** Runs `fn` after everything queued before it; its result or error goes to the caller only. */
  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => {});
    return p;
  }

  // ---- connections -------------------------------------------------------------------------------------------

  private sockets(exclude?: WebSocket): { ws: WebSocket; conn: Conn }[] {
    const out: { ws: WebSocket; conn: Conn }[] = [];
    for (const ws of this.ctx.getWebSockets()) {
      if (ws === exclude || ws.readyState !== WebSocket.READY_STATE_OPEN) continue;
      const conn = ws.deserializeAttachment() as Conn | null;
      if (conn) out.push({ ws, conn });
    }
    return out;
  }

  private targets(): Target[] {
    const out: Target[] = this.sockets().map(({ ws, conn }) => ({ kind: "ws" as const, ws, conn }));
    for (const sse of this.sse) if (sse.open) out.push({ kind: "sse", sse, conn: sse.conn });
    return out;
  }

  private hubName(): string | null {
    if (this.name) return this.name;
    const first = this.sockets()[0];
    if (first) this.name = first.conn.hub;
    return this.name;
  }

  /** The union of the subscriptions' keys, or null when no connection is left. */
  private heldKeys(exclude?: WebSocket): Set<string> | null {
    const socks = this.sockets(exclude);
    const live = [...this.sse].filter((s) => s.open);
    if (!socks.length && !live.length) return null;
    const keys = new Set<string>();
    for (const { conn } of socks) for (const s of conn.subs) keys.add(s.k);
    for (const s of live) for (const sub of s.conn.subs) keys.add(sub.k);
    return keys;
  }

  /** What the router is told: the shared keys subscribed to (empty: connections, none on shared streams), or null. */
  private currentKeys(exclude?: WebSocket): string[] | null {
    const keys = this.heldKeys(exclude);
    return keys ? [...keys].filter((k) => !isAccountKey(k)).sort() : null;
  }

  /**
   * Versions of this hub's reports to the router, increasing across the object's lifetimes (the clock moves between
   * them; within one instant the counter orders them). Reports are made on the chain, so versions follow its order.
   */
  private nextVersion(): number {
    return Date.now() * 1000 + (this.seq++ % 1000);
  }

  /**
   * Tells the router this hub's keys when they changed. `since`: when the hub received the subscription this report
   * adds; the router answers with what it published for it from then on and did not send here, which is handed out
   * now, before anything queued behind (a delivery of what the router published later). False: refused (a bound on
   * keys), nothing changed there.
   */
  private async syncRouter(exclude?: WebSocket, since?: number): Promise<boolean> {
    const name = this.hubName();
    if (!name) return true;
    const keys = this.currentKeys(exclude);
    const sig = keys ? keys.join("\n") : "\u0000";
    if (sig === this.synced) return true;
    const answer = await routerStub(this.env).routerSetHub(name, keys, this.nextVersion(), since);
    if (answer.full) return false;
    this.synced = sig;
    if (answer.missed.length) await this.process(answer.missed);
    return true;
  }

  /** The open connections, or those of one signed-out IP. */
  private connectionCount(ip?: string): number {
    const conns = [...this.sockets().map(({ conn }) => conn), ...[...this.sse].filter((s) => s.open).map((s) => s.conn)];
    return ip === undefined ? conns.length : conns.filter((c) => !c.acct && c.ip === ip).length;
  }

  private limitFor(session: Session): number {
    return session.acct ? MAX_CONNECTIONS_PER_HUB : MAX_ANON_CONNECTIONS_PER_HUB;
  }

  async fetch(request: Request): Promise<Response> {
    const receivedAt = Date.now();
    const url = new URL(request.url);
    const raw = request.headers.get("x-tern-session");
    if (!raw) return json({ error: "Not found" }, 404);
    const session = JSON.parse(raw) as Session;
    this.name = session.hub;
    if (this.connectionCount() >= this.limitFor(session)) return json({ error: "Too many connections" }, 429);
    if (!session.acct && session.ip !== undefined && this.connectionCount(session.ip) >= MAX_ANON_CONNECTIONS_PER_IP) {
      return json({ error: "Too many connections" }, 429);
    }
    const q = url.searchParams;
    if (url.pathname === "/ws") return this.acceptSocket(session, q, receivedAt);
    if (url.pathname === "/sse") return this.openEventStream(session, q, receivedAt);
    return json({ error: "Not found" }, 404);
  }

  // ---- WebSocket -----------------------------------------------------------------------------------------------

  private async acceptSocket(session: Session, q: URLSearchParams, receivedAt: number): Promise<Response> {
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server);
    const conn: Conn = { ...session, subs: [] };
    server.serializeAttachment(conn);
    // The query's stream is subscribed before the handshake completes (and what was published for it since the
    // request came is handed over: router.ts), so no event after the connection was accepted is missed.
    const stream = q.get("stream");
    await this.enqueue(async () => {
      if (stream) await this.subscribeSocket(server, stream, { tag: q.get("tag") ?? undefined, list: q.get("list") ?? undefined }, receivedAt);
      await this.syncRouter();
    });
    if (session.tok) await this.ensureAlarm();
    return new Response(null, { status: 101, webSocket: client });
  }

  async onMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const receivedAt = Date.now();
    if (typeof message !== "string") {
      ws.close(1003, "The mastodon streaming server does not support binary messages");
      await this.enqueue(() => this.syncRouter(ws));
      return;
    }
    if (message.length > MAX_CLIENT_MESSAGE || utf8Length(message) > MAX_CLIENT_MESSAGE) {
      return sendSocket(ws, { error: "Message too long", status: 400 });
    }
    let msg: unknown;
    try {
      msg = JSON.parse(message);
    } catch {
      return;
    }
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) return;
    const { type, stream, tag, list } = msg as Record<string, unknown>;
    const name = firstParam(stream);
    try {
      if (type === "subscribe") await this.enqueue(() => this.subscribeSocket(ws, name, { tag, list }, receivedAt));
      else if (type === "unsubscribe") await this.enqueue(() => this.unsubscribeSocket(ws, name, { tag, list }));
    } catch (e) {
      console.error("streaming: subscription failed", e instanceof Error ? e.message : e);
      sendSocket(ws, { error: "An unexpected error occurred", status: 500 });
    }
  }

  async onClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // Woken from hibernation by the close of its last socket, the object has no open socket left to learn its name
    // from; the closing one's attachment still says it, and the router must hear that no connection is left.
    if (!this.name) {
      try {
        this.name = (ws.deserializeAttachment() as Conn | null)?.hub ?? null;
      } catch {}
    }
    // The router hears of it first, then the closing handshake completes: a client that saw its socket close knows the
    // server is done with it.
    await this.enqueue(() => this.syncRouter(ws)).catch(() => {});
    try {
      // Codes 1005/1006/1015 only describe what happened and cannot be sent.
      ws.close(code >= 1000 && code < 5000 && code !== 1005 && code !== 1006 && code !== 1015 ? code : 1000, reason.slice(0, 120));
    } catch {}
  }

  /**
   * Subscribes a socket: its attachment changes at once (an event for an account stream that comes after this finds
   * it), then the router is told of a new shared key with `receivedAt`, when the message came. Refused by the router
   * (its bound on keys), the subscription is undone and the client told.
   */
  private async subscribeSocket(ws: WebSocket, name: string | undefined, params: { tag?: unknown; list?: unknown }, receivedAt: number): Promise<void> {
    const conn = ws.deserializeAttachment() as Conn | null;
    if (!conn || ws.readyState !== WebSocket.READY_STATE_OPEN) return;
    const checked = await this.check(conn, name, params);
    if ("error" in checked) return sendSocket(ws, { error: checked.error, status: checked.status });
    const sub = checked;
    if (conn.subs.some((s) => s.k === sub.k)) return;
    const next: Conn = { ...conn, subs: [...conn.subs, sub] };
    if (next.subs.length > MAX_SUBSCRIPTIONS || runtimeSize(JSON.stringify(next)) > MAX_ATTACHMENT || !attach(ws, next)) {
      return sendSocket(ws, { error: "Too many subscriptions", status: 400 });
    }
    if (!this.allowChange(sub.k, conn, ws)) {
      attach(ws, conn);
      return sendSocket(ws, { error: "Too many requests", status: 429 });
    }
    if (!(await this.syncRouter(undefined, receivedAt))) {
      attach(ws, conn);
      return sendSocket(ws, { error: STREAMS_FULL.error, status: STREAMS_FULL.status });
    }
  }

  private async unsubscribeSocket(ws: WebSocket, name: string | undefined, params: { tag?: unknown; list?: unknown }): Promise<void> {
    const conn = ws.deserializeAttachment() as Conn | null;
    if (!conn || ws.readyState !== WebSocket.READY_STATE_OPEN) return;
    const r = resolveStream(name, params, conn.acct, conn.sc);
    if (!r.ok) return sendSocket(ws, { error: "Error unsubscribing from channel" });
    const subs = conn.subs.filter((s) => s.k !== r.sub.k);
    if (subs.length === conn.subs.length) return;
    if (!this.allowChange(r.sub.k, conn, ws)) return sendSocket(ws, { error: "Too many requests", status: 429 });
    attach(ws, { ...conn, subs });
    await this.syncRouter();
  }

  /**
   * Whether a connection (`ws`; an event stream has none) may add or drop key `k` now, counted for it and for its
   * owner (ownerOf). Only a change to the hub's set of shared keys reaches the router (a storage write), so only those
   * count: account keys, and a key another connection of the hub holds, are free (every signed-out socket of an `anon`
   * hub subscribing `public` as it connects, which a burst of reconnections after a restart would otherwise exhaust
   * in seconds).
   */
  private allowChange(k: string, conn: Conn, ws?: WebSocket): boolean {
    if (isAccountKey(k)) return true;
    const held =
      this.sockets(ws).some(({ conn }) => conn.subs.some((s) => s.k === k)) || [...this.sse].some((s) => s.open && s.conn.subs.some((x) => x.k === k));
    if (held) return true;
    const now = Date.now();
    const budgets: { b: Budget; limit: number }[] = [];
    if (ws) budgets.push({ b: entryWeak(this.connBudgets, ws), limit: MAX_CHANGES_PER_MINUTE });
    const owner = ownerOf(conn);
    if (owner) {
      if (this.ownerBudgets.size > 4096) for (const [o, b] of this.ownerBudgets) if (now - b.start >= 60_000) this.ownerBudgets.delete(o);
      budgets.push({ b: entry(this.ownerBudgets, owner, () => ({ start: now, count: 0 })), limit: MAX_OWNER_CHANGES_PER_MINUTE });
    }
    return spend(budgets, now);
  }

  /** A subscription request checked as Mastodon does, list ownership included. */
  private async check(conn: Conn, name: string | undefined, params: { tag?: unknown; list?: unknown }): Promise<Sub | StreamError> {
    const r = resolveStream(name, params, conn.acct, conn.sc);
    if (!r.ok) return r.err;
    const listId = listIdOf(r.sub.k);
    if (listId && conn.acct) {
      const own = await this.db()
        .select({ id: lists.id })
        .from(lists)
        .where(and(eq(lists.id, listId), eq(lists.accountId, conn.acct)))
        .limit(1);
      if (!own.length) return { status: 401, error: "Not authorized to stream this list" };
    }
    return r.sub;
  }

  // ---- server-sent events --------------------------------------------------------------------------------------

  private async openEventStream(session: Session, q: URLSearchParams, receivedAt: number): Promise<Response> {
    const conn: Conn = { ...session, subs: [] };
    // Checked, added and reported in one step of the chain: a delivery after it finds the stream.
    const opened = await this.enqueue(async (): Promise<StreamError | { sse: SseConn; readable: ReadableStream<Uint8Array> }> => {
      const checked = await this.check(conn, q.get("stream") ?? undefined, { tag: q.get("tag") ?? undefined, list: q.get("list") ?? undefined });
      if ("error" in checked) return checked;
      if (!this.allowChange(checked.k, conn)) return { status: 429, error: "Too many requests" };
      conn.subs.push(checked);
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const sse: SseConn = { conn, writer: writable.getWriter(), timer: null, open: true };
      this.sse.add(sse);
      writeSse(sse, ":)\n");
      if (!(await this.syncRouter(undefined, receivedAt))) {
        this.dropSseNow(sse);
        return STREAMS_FULL;
      }
      return { sse, readable };
    });
    if ("error" in opened) return json({ error: opened.error }, opened.status);
    const { sse, readable } = opened;
    const writer = sse.writer;
    // An open event stream keeps the object in memory anyway, so its heartbeat also re-checks the token (no alarm,
    // no storage: an object holding only event streams never touches its storage).
    let beats = 0;
    sse.timer = setInterval(() => {
      if (!writeSse(sse, ":thump\n")) return this.dropSse(sse);
      if (session.tok && ++beats % Math.round(TOKEN_CHECK_MS / SSE_HEARTBEAT_MS) === 0) void this.enqueue(() => this.checkTokens(false)).catch(() => {});
    }, SSE_HEARTBEAT_MS);
    writer.closed.then(
      () => this.dropSse(sse),
      () => this.dropSse(sse),
    );
    return new Response(readable, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  private dropSse(sse: SseConn) {
    if (!this.sse.has(sse)) return;
    sse.open = false;
    if (sse.timer) clearInterval(sse.timer);
    this.sse.delete(sse);
    sse.writer.close().catch(() => {});
    void this.enqueue(() => this.syncRouter()).catch(() => {});
  }

  // ---- delivery ------------------------------------------------------------------------------------------------

  /** Events from the router, in order; answers with this hub's keys afterwards (null: no connections). */
  deliver(items: HubItem[]): Promise<HubState> {
    return this.enqueue(async () => {
      await this.process(items);
      return { keys: this.currentKeys(), version: this.nextVersion() };
    });
  }

  /** Hands events out to the connections (on the chain). */
  private async process(items: HubItem[]): Promise<void> {
    items = await this.missedRendered(this.forHeldKeys(items));
    const rendered = this.prerender(items);
    for (const item of items) {
      try {
        await this.handle(item, rendered);
      } catch (e) {
        // One event that cannot be rendered (D1 unavailable) does not hold back the ones after it.
        console.error("streaming: delivery failed", item.envelope.kind, e instanceof Error ? e.message : e);
      }
    }
  }

  /**
   * The items narrowed to the keys some connection holds now (account events come whatever the account's sockets
   * subscribe to), without those left with none; cache invalidations stay.
   */
  private forHeldKeys(items: HubItem[]): HubItem[] {
    const held = this.heldKeys() ?? new Set<string>();
    const out: HubItem[] = [];
    for (const item of items) {
      const e = item.envelope;
      const keys = item.keys.filter((k) => held.has(k));
      if (keys.length || e.kind === "relations" || (e.kind === "raw" && e.event === "filters_changed")) out.push({ ...item, keys });
    }
    return out;
  }

  /**
   * Status events the router answered a report with, for shared keys this hub began listening to while it published
   * them (router.ts `missed`), come without a rendering: rendered here, as the publisher does (one D1 batch for all), on
   * the keys they belong on.
   */
  private async missedRendered(items: HubItem[]): Promise<HubItem[]> {
    const missed = items.filter(({ envelope: e, keys }) => e.kind === "status" && !e.payload && keys.some((k) => !isAccountKey(k)));
    if (!missed.length) return items;
    let parts: Awaited<ReturnType<typeof sharedParts>>;
    try {
      const keys = [...new Set(missed.flatMap((i) => i.keys.filter((k) => !isAccountKey(k))))];
      const statuses = missed.map(({ envelope: e }) => e as Extract<Envelope, { kind: "status" }>);
      parts = await sharedParts(this.db(), statuses, keys);
    } catch (e) {
      console.error("streaming: rendering missed events failed", e instanceof Error ? e.message : e);
      parts = new Map();
    }
    return items.flatMap((item) => {
      const e = item.envelope;
      if (!missed.includes(item) || e.kind !== "status") return [item];
      const part = parts.get(e.statusId);
      const keys = item.keys.filter((k) => isAccountKey(k) || part?.keys.includes(k));
      if (!keys.length) return [];
      return [{ ...item, envelope: part ? { ...e, payload: part.payload, meta: part.meta } : e, keys }];
    });
  }

  /**
   * Starts rendering, for each of the hub's accounts, the statuses the items bring to its account streams: one status
   * bundle (one D1 batch) per account and view for all of them, rather than one per event. By renderKey.
   */
  private prerender(items: HubItem[]): Map<string, Promise<Rendered | null>> {
    const out = new Map<string, Promise<Rendered | null>>();
    const accts = new Set<string>();
    for (const t of this.targets()) if (t.conn.acct) accts.add(t.conn.acct);
    if (!accts.size) return out;
    const views = new Map<string, { acct: string; context: FilterContext | undefined; cfg: Config; ids: Set<string> }>();
    for (const { envelope: e, keys } of items) {
      if (e.kind !== "status") continue;
      for (const context of new Set(keys.filter(isAccountKey).map(contextOf))) {
        for (const acct of accts) {
          // Rendered once by the publisher: only its authors' hubs render it themselves.
          if (e.account && !e.account.authors.includes(acct)) continue;
          const k = `${acct}:${context ?? ""}:${e.cfg.origin}`;
          entry(views, k, () => ({ acct, context, cfg: e.cfg, ids: new Set<string>() })).ids.add(e.statusId);
        }
      }
    }
    for (const { acct, context, cfg, ids } of views.values()) {
      const bundle = loadStatusBundle(this.db(), [...ids], acct);
      for (const id of ids) {
        const one = bundle.then((b) => {
          const r = renderStatusFrom(cfg, b, id, context ? { filterContext: context } : {});
          return r ? { json: JSON.stringify(r), direct: r.visibility === "direct" } : null;
        });
        one.catch(() => {}); // awaited (and its failure reported) by the event that uses it
        out.set(renderKey(id, acct, context, cfg), one);
      }
    }
    return out;
  }

  private async handle(item: HubItem, rendered: Map<string, Promise<Rendered | null>>): Promise<void> {
    const e = item.envelope;
    if (e.kind === "relations") {
      this.viewer = null;
      return;
    }
    if (e.kind === "raw" && e.event === "filters_changed") this.viewer = null;
    const keys = new Set(item.keys);
    for (const t of this.targets()) {
      for (const sub of t.conn.subs) {
        if (!keys.has(sub.k)) continue;
        if (e.kind === "raw") {
          if (e.event === "notification" && sub.k === "user" && !seesNotifications(t.conn.sc)) continue;
          this.emit(t, sub, e.event, e.payload);
          continue;
        }
        const payload = await this.statusPayload(e, sub, t.conn, rendered, item);
        if (payload !== null) this.emit(t, sub, e.event, payload);
      }
    }
  }

  /**
   * An update or status.update for one subscription. Account streams: as the account's REST timeline would show it
   * (home context for user and list, none for direct; direct only for direct statuses): the publisher's one rendering
   * with the viewer's fields and rules added (accountPayloadFor), or, for its authors and for quotes, rendered here for
   * the account. Shared streams: the signed-out rendering, filtered for the account.
   */
  private async statusPayload(
    e: Extract<Envelope, { kind: "status" }>,
    sub: Sub,
    conn: Conn,
    cache: Map<string, Promise<Rendered | null>>,
    item: HubItem,
  ): Promise<string | null> {
    if (isAccountKey(sub.k)) {
      if (!conn.acct) return null;
      const context = contextOf(sub.k);
      const part = e.account;
      if (part && !part.authors.includes(conn.acct)) {
        if (sub.k === "direct" && !part.direct) return null;
        // One per item and context, whatever the number of sockets (the hub has one account).
        const hydrated = entry(this.hydrated(item), context ?? "", () => {
          const acct = conn.acct!;
          const p = (item.facts?.filters ? this.viewerState(acct).then((st) => st.filters) : Promise.resolve([])).then((filters) =>
            accountPayloadFor(acct, part, item.facts, filters, context),
          );
          p.catch(() => {});
          return p;
        });
        return hydrated;
      }
      const cacheKey = renderKey(e.statusId, conn.acct, context, e.cfg);
      let p = cache.get(cacheKey);
      if (!p) {
        p = renderStatuses(this.db(), e.cfg, [e.statusId], conn.acct, context ? { filterContext: context } : {}).then((r) =>
          r[0] ? { json: JSON.stringify(r[0]), direct: r[0].visibility === "direct" } : null,
        );
        cache.set(cacheKey, p);
      }
      const out = await p;
      if (!out || (sub.k === "direct" && !out.direct)) return null;
      return out.json;
    }
    if (!e.payload) return null;
    if (!conn.acct || !e.meta) return e.payload;
    return sharedPayloadFor(await this.viewerState(conn.acct), e.meta, e.payload);
  }

  /** Per delivered item, its account-stream payloads by filter context (dropped with the item). */
  private hydratedOf = new WeakMap<HubItem, Map<string, Promise<string | null>>>();
  private hydrated(item: HubItem): Map<string, Promise<string | null>> {
    let m = this.hydratedOf.get(item);
    if (!m) {
      m = new Map();
      this.hydratedOf.set(item, m);
    }
    return m;
  }

  private async viewerState(accountId: string): Promise<ViewerState> {
    if (this.viewer && this.viewer.accountId === accountId && Date.now() - this.viewer.loadedAt < CACHE_MS) return this.viewer;
    this.viewer = await loadViewerState(this.db(), accountId);
    return this.viewer;
  }

  private emit(t: Target, sub: Sub, event: string, payload: string | undefined) {
    if (t.kind === "ws") {
      sendSocket(t.ws, payload === undefined ? { stream: streamArray(sub), event } : { stream: streamArray(sub), event, payload });
    } else if (!writeSse(t.sse, `event: ${event}\ndata: ${payload ?? "undefined"}\n\n`)) {
      this.dropSse(t.sse);
    }
  }

  // ---- closing ---------------------------------------------------------------------------------------------------

  /** Closes the connections of one token (all of the hub's when null): token revoked, login disabled, suspended. */
  kill(tokenId: string | null): Promise<void> {
    return this.enqueue(async () => {
      for (const { ws, conn } of this.sockets()) {
        if (tokenId === null || conn.tok === tokenId) {
          try {
            ws.close(1000, "Access token is no longer valid");
          } catch {}
        }
      }
      for (const sse of [...this.sse]) if (tokenId === null || sse.conn.tok === tokenId) this.dropSseNow(sse);
      await this.syncRouter();
    });
  }

  private dropSseNow(sse: SseConn) {
    sse.open = false;
    if (sse.timer) clearInterval(sse.timer);
    this.sse.delete(sse);
    sse.writer.close().catch(() => {});
  }

  private async ensureAlarm(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) == null) await this.ctx.storage.setAlarm(Date.now() + TOKEN_CHECK_MS);
  }

  /** Periodic re-check of the tokens behind signed-in sockets; re-armed while any remain. */
  async alarm(): Promise<void> {
    await this.enqueue(() => this.checkTokens(true));
  }

  /** Closes the connections whose token no longer authorises streaming (one D1 query). */
  private async checkTokens(rearm: boolean): Promise<void> {
    const tokens = new Set<string>();
    for (const { conn } of this.sockets()) if (conn.tok) tokens.add(conn.tok);
    for (const sse of this.sse) if (sse.conn.tok) tokens.add(sse.conn.tok);
    if (!tokens.size) return;
    const valid = await validTokens(this.db(), [...tokens]);
    for (const { ws, conn } of this.sockets()) {
      if (conn.tok && !valid.has(conn.tok)) {
        try {
          ws.close(1000, "Access token is no longer valid");
        } catch {}
      }
    }
    for (const sse of [...this.sse]) if (sse.conn.tok && !valid.has(sse.conn.tok)) this.dropSseNow(sse);
    await this.syncRouter();
    if (rearm && this.sockets().some(({ conn }) => conn.tok)) await this.ctx.storage.setAlarm(Date.now() + TOKEN_CHECK_MS);
  }
}

/** The tokens among `ids` that still authorise streaming: not revoked, their user approved, enabled and not suspended. */
export async function validTokens(db: DB, ids: string[]): Promise<Set<string>> {
  const rows = await db.all<{ id: string }>(sql`SELECT t.id AS id FROM oauth_access_tokens t
    JOIN users u ON u.id = t.user_id JOIN accounts a ON a.id = u.account_id
    WHERE t.id IN ${idList(ids)}
      AND t.revoked_at IS NULL AND u.disabled = 0 AND u.approved = 1 AND a.suspended_at IS NULL`);
  return new Set(rows.map((r) => unpadId(String(r.id))));
}

/** Sets a socket's attachment; false when the runtime refuses it (over its size limit). */
function attach(ws: WebSocket, conn: Conn): boolean {
  try {
    ws.serializeAttachment(conn);
    return true;
  } catch {
    return false;
  }
}

/** The budget of a connection, started when first needed. */
function entryWeak(map: WeakMap<WebSocket, Budget>, ws: WebSocket): Budget {
  let b = map.get(ws);
  if (!b) {
    b = { start: Date.now(), count: 0 };
    map.set(ws, b);
  }
  return b;
}

function sendSocket(ws: WebSocket, msg: Record<string, unknown>) {
  try {
    ws.send(JSON.stringify(msg));
  } catch {}
}

/** Queues a chunk on an event stream; false when the stream is gone or its reader is too far behind. */
function writeSse(sse: SseConn, text: string): boolean {
  if (!sse.open) return false;
  const backlog = sse.writer.desiredSize;
  if (backlog !== null && backlog < -MAX_SSE_BACKLOG) return false;
  sse.writer.write(enc.encode(text)).catch(() => {
    sse.open = false;
  });
  return true;
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}
