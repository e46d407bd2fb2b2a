// Streaming test helpers: WebSocket and event-stream clients over SELF that queue what arrives and hand it out in
// order (tests wait on these events, never on timers), and a status → fan-out → publish shortcut.
import { SELF, env } from "cloudflare:test";
import { expect, it } from "vitest";
import { Effects } from "../../src/effects/collector";
import { disconnectStreams, publishConversations, publishStatus } from "../../src/streaming/publish";
import { fanOut } from "../../src/timelines/fanout";
import { cfg, db, ORIGIN } from "./helpers";

export interface StreamMessage {
  stream?: string[];
  event?: string;
  payload?: string;
  error?: string;
  status?: number;
}

/**
 * Every connection a test opened is closed at the end of the test body, and the test waits until the server is done
 * with it (the hub told the router). It has to happen inside the test: vitest-pool-workers pops the test's isolated
 * storage before afterEach hooks run, and an object still holding an event stream then keeps its database open.
 */
const open: { close(): Promise<unknown> }[] = [];

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close()));
}

/** `it` for tests that open connections: they are all closed (and waited for) when the body ends, pass or fail. */
export function itStreams(name: string, fn: () => Promise<void>) {
  it(name, async () => {
    try {
      await fn();
    } finally {
      await closeAll();
    }
  });
}

/** A queue of values that arrive by event; `next()` waits for the next one. */
class Inbox<T> {
  private items: T[] = [];
  private waiters: ((v: T) => void)[] = [];
  push(v: T) {
    const w = this.waiters.shift();
    if (w) w(v);
    else this.items.push(v);
  }
  next(): Promise<T> {
    if (this.items.length) return Promise.resolve(this.items.shift()!);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  get pending(): number {
    return this.items.length;
  }
}

export class WsClient {
  private inbox = new Inbox<StreamMessage>();
  readonly closed: Promise<CloseEvent>;
  constructor(
    readonly ws: WebSocket,
    readonly res: Response,
  ) {
    ws.addEventListener("message", (e) => {
      const text = String(e.data);
      let msg: StreamMessage | string;
      try {
        msg = JSON.parse(text);
      } catch {
        msg = text; // the runtime's "pong" to a "ping"
      }
      this.inbox.push(msg as StreamMessage);
    });
    this.closed = new Promise((resolve) => ws.addEventListener("close", (e) => resolve(e as CloseEvent)));
    ws.accept();
    open.push(this);
  }
  next(): Promise<StreamMessage> {
    return this.inbox.next();
  }
  get pending(): number {
    return this.inbox.pending;
  }
  send(msg: unknown) {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }
  subscribe(stream: string, params: Record<string, string> = {}) {
    this.send({ type: "subscribe", stream, ...params });
  }
  unsubscribe(stream: string, params: Record<string, string> = {}) {
    this.send({ type: "unsubscribe", stream, ...params });
  }
  /**
   * Waits until the hub has handled every message sent before: it answers an unknown stream with an error, in order,
   * after the subscriptions before it took effect (router included).
   */
  async barrier(): Promise<void> {
    this.send({ type: "subscribe", stream: "barrier" });
    expect(await this.next()).toEqual({ error: "Unknown stream type", status: 400 });
  }
  /** Subscribes and waits until the subscription is live. */
  async sub(stream: string, params: Record<string, string> = {}) {
    this.subscribe(stream, params);
    await this.barrier();
  }
  /** Closes (if still open) and resolves once the server completed the closing handshake. */
  close(): Promise<CloseEvent> {
    try {
      this.ws.close(1000, "done");
    } catch {}
    return this.closed;
  }
}

export type Auth = { token: string; via?: "header" | "query" | "protocol" } | null;

/** Opens the WebSocket (the Response is returned as is when it is not a 101). */
export async function connectWs(auth: Auth, query: Record<string, string> = {}, path = "/api/v1/streaming"): Promise<WsClient | Response> {
  const headers: Record<string, string> = { upgrade: "websocket" };
  const q = new URLSearchParams(query);
  if (auth) {
    const via = auth.via ?? "header";
    if (via === "header") headers.authorization = `Bearer ${auth.token}`;
    else if (via === "query") q.set("access_token", auth.token);
    else headers["sec-websocket-protocol"] = auth.token;
  }
  const qs = q.toString();
  const res = await SELF.fetch(`${ORIGIN}${path}${qs ? `?${qs}` : ""}`, { headers });
  if (res.status !== 101 || !res.webSocket) return res;
  return new WsClient(res.webSocket, res);
}

/** Opens the WebSocket and fails the test unless it was upgraded. */
export async function ws(auth: Auth, query: Record<string, string> = {}): Promise<WsClient> {
  const c = await connectWs(auth, query);
  if (c instanceof Response) throw new Error(`not upgraded: ${c.status} ${await c.text()}`);
  return c;
}

/** An event stream reader: yields whole frames (comments and events) as they arrive. */
export class SseClient {
  private reader: ReadableStreamDefaultReader<Uint8Array>;
  private buf = "";
  private dec = new TextDecoder();
  /** `accountId`: the signed-in account, whose connections close() ends from the server side. */
  constructor(
    readonly res: Response,
    readonly accountId: string | null,
  ) {
    this.reader = res.body!.getReader();
    open.push(this);
  }
  /** The next chunk of text up to and including a newline that ends a comment line or a blank line. */
  async nextFrame(): Promise<string> {
    for (;;) {
      const m = /^(:[^\n]*\n)|^([\s\S]*?\n\n)/.exec(this.buf);
      if (m) {
        this.buf = this.buf.slice(m[0].length);
        return m[0];
      }
      const { value, done } = await this.reader.read();
      if (done) throw new Error("event stream ended");
      this.buf += this.dec.decode(value, { stream: true });
    }
  }
  /** The next event (comments and heartbeats skipped). */
  async nextEvent(): Promise<{ event: string; data: string }> {
    for (;;) {
      const f = await this.nextFrame();
      if (f.startsWith(":")) continue;
      const event = /^event: (.*)$/m.exec(f)?.[1] ?? "";
      const data = /^data: (.*)$/m.exec(f)?.[1] ?? "";
      return { event, data };
    }
  }
  /**
   * Ends the stream from the server side (the hub drops it and tells the router before this resolves), then stops
   * reading. A signed-out stream is only cancelled: the hub notices on its next write.
   */
  async close(): Promise<void> {
    if (!this.accountId) return void (await this.reader.cancel().catch(() => {}));
    await disconnectStreams(env, this.accountId);
    // Read to the end: the stream is finished on every hop (hub, Worker, here) once `done` arrives.
    for (;;) {
      const { done } = await this.reader.read().catch(() => ({ done: true }));
      if (done) return;
    }
  }
}

/** Opens an event stream; `user` (a signed-in user) for its token and for closing it from the server side. */
export async function sse(path: string, user?: { token: string; id: string }): Promise<SseClient | Response> {
  const res = await SELF.fetch(`${ORIGIN}/api/v1/streaming/${path}`, { headers: user ? { authorization: `Bearer ${user.token}` } : {} });
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res;
  return new SseClient(res, user?.id ?? null);
}

/** Fans a status out (every chunk) and publishes each chunk, as the effects consumer does. */
export async function fanOutAndPublish(statusId: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const r = await fanOut(db(), new Effects(ORIGIN), statusId, cursor);
    await publishStatus(db(), env, cfg(), statusId, r);
    await publishConversations(db(), env, cfg(), r.conversations);
    cursor = r.next;
  } while (cursor);
}

export const payloadOf = (m: StreamMessage) => JSON.parse(m.payload!);
