// `fetchMock`: outbound fetches of the Worker under test answered by interceptors, as `cloudflare:test` offered it up to
// @cloudflare/vitest-pool-workers 0.12 (an undici MockAgent; the pool for Vitest 4 dropped it and says to replace the
// global fetch). The same API, the part Tern's tests use: `activate()`, `disableNetConnect()`,
// `get(origin).intercept({ path, method }).reply(status, data, { headers })` or `.reply((opts) => ({ statusCode, data,
// responseOptions }))` or `.replyWithError(e)`, then `.persist()`, `.times(n)`, `.delay(ms)`, and
// `assertNoPendingInterceptors()`. Matching and bookkeeping follow undici's MockAgent: the first interceptor not used
// up whose origin, path (query parameters sorted; a string, RegExp or predicate) and method match; an interceptor is
// pending until it has answered `times` (1) requests, a persisted one answers for ever. With net connect disabled, a
// request nothing matches fails; else it goes out. Not activated, fetch is the runtime's own.
//
// The Worker runs in the test's isolate, so replacing `globalThis.fetch` covers its fetches too. It is replaced once,
// by the setup file (test/integration/apply-migrations.ts), before any test file or Worker module is loaded, and left
// in place: it hands over to the runtime's fetch while the mock is off. State is per isolate, that is per test file
// (each file has its own workerd), as the pool's fetchMock was.

type Matcher = string | RegExp | ((value: string) => boolean);

interface InterceptOptions {
  path: Matcher;
  method?: Matcher;
}

/** What a reply callback is handed (undici's MockResponseCallbackOptions): the body is the UTF-8 text of the bytes. */
export interface MockRequestOptions {
  path: string;
  origin: string;
  method: string;
  body?: BodyInit;
  headers: Record<string, string>;
}

type ReplyData = string | Uint8Array | ArrayBuffer | object | null | undefined;
type ReplyResult = { statusCode: number; data?: ReplyData; responseOptions?: { headers?: Record<string, string> } };

interface Interceptor {
  origin: Matcher;
  path: Matcher;
  method: Matcher;
  times: number;
  persist: boolean;
  timesInvoked: number;
  delayMs: number;
  answer: ((opts: MockRequestOptions) => ReplyResult | Promise<ReplyResult>) | { error: Error } | undefined;
}

const sortQuery = (path: string): string => {
  const i = path.indexOf("?");
  if (i < 0) return path;
  const q = new URLSearchParams(path.slice(i + 1));
  q.sort();
  return `${path.slice(0, i)}?${q}`;
};

function matches(matcher: Matcher, value: string, normalize: (s: string) => string = (s) => s): boolean {
  if (typeof matcher === "function") return matcher(value);
  if (matcher instanceof RegExp) return matcher.test(value);
  return normalize(matcher) === normalize(value);
}

function bodyOf(data: ReplyData): BodyInit | null {
  if (data === null || data === undefined) return null;
  if (typeof data === "string" || data instanceof Uint8Array || data instanceof ArrayBuffer) return data as BodyInit;
  return JSON.stringify(data);
}

class MockScope {
  constructor(private readonly i: Interceptor) {}
  /** Answers every matching request from now on (and is pending until it has answered one). */
  persist(): this {
    this.i.persist = true;
    return this;
  }
  /** Answers `n` matching requests. */
  times(n: number): this {
    this.i.times = n;
    return this;
  }
  /** Answers `ms` after the request (a request aborted meanwhile fails as the runtime's fetch would). */
  delay(ms: number): this {
    this.i.delayMs = ms;
    return this;
  }
}

class MockInterceptor {
  constructor(private readonly i: Interceptor) {}
  reply(status: number, data?: ReplyData | ((opts: MockRequestOptions) => ReplyData), options?: { headers?: Record<string, string> }): MockScope;
  reply(callback: (opts: MockRequestOptions) => ReplyResult | Promise<ReplyResult>): MockScope;
  reply(
    statusOrCallback: number | ((opts: MockRequestOptions) => ReplyResult | Promise<ReplyResult>),
    data?: ReplyData | ((opts: MockRequestOptions) => ReplyData),
    options: { headers?: Record<string, string> } = {},
  ): MockScope {
    if (typeof statusOrCallback === "function") this.i.answer = statusOrCallback;
    else
      this.i.answer = (opts) => ({
        statusCode: statusOrCallback,
        data: typeof data === "function" ? (data as (o: MockRequestOptions) => ReplyData)(opts) : data,
        responseOptions: options,
      });
    return new MockScope(this.i);
  }
  /** The request fails with `error`. */
  replyWithError(error: Error): MockScope {
    this.i.answer = { error };
    return new MockScope(this.i);
  }
}

export class MockAgent {
  private active = false;
  private netConnect = true;
  private interceptors: Interceptor[] = [];

  activate(): void {
    this.active = true;
  }
  deactivate(): void {
    this.active = false;
  }
  disableNetConnect(): void {
    this.netConnect = false;
  }
  enableNetConnect(): void {
    this.netConnect = true;
  }
  get isActive(): boolean {
    return this.active;
  }

  get(origin: Matcher): { intercept(options: InterceptOptions): MockInterceptor } {
    return {
      intercept: (options) => {
        const i: Interceptor = {
          origin,
          path: options.path,
          method: options.method ?? "GET",
          times: 1,
          persist: false,
          timesInvoked: 0,
          delayMs: 0,
          answer: undefined,
        };
        this.interceptors.push(i);
        return new MockInterceptor(i);
      },
    };
  }

  /** Interceptors that have not answered as many requests as they were set up for (persisted ones: none yet). */
  pendingInterceptors(): { origin: string; path: string; method: string; timesInvoked: number; times: number }[] {
    return this.interceptors
      .filter((i) => i.timesInvoked < i.times)
      .map((i) => ({ origin: String(i.origin), path: String(i.path), method: String(i.method), timesInvoked: i.timesInvoked, times: i.times }));
  }

  assertNoPendingInterceptors(): void {
    const pending = this.pendingInterceptors();
    if (!pending.length) return;
    const lines = pending.map((p) => `  ${p.method} ${p.origin}${p.path} (answered ${p.timesInvoked} of ${p.times})`);
    throw new Error(`${pending.length} interceptor${pending.length === 1 ? " is" : "s are"} pending:\n${lines.join("\n")}`);
  }

  /** Forgets every interceptor and turns the mock off. */
  reset(): void {
    this.active = false;
    this.netConnect = true;
    this.interceptors = [];
  }

  /** The mocked fetch: `realFetch` for what goes out. */
  async fetch(realFetch: typeof fetch, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    if (!this.active) return realFetch(input, init);
    const request = new Request(input, init);
    if (request.headers.get("Upgrade") !== null) return realFetch(request);
    const url = new URL(request.url);
    const path = url.pathname + url.search;
    const interceptor = this.interceptors.find(
      (i) =>
        (i.persist || i.timesInvoked < i.times) &&
        matches(i.origin, url.origin) &&
        matches(i.path, path, sortQuery) &&
        matches(i.method, request.method, (m) => m.toUpperCase()),
    );
    if (!interceptor) {
      if (this.netConnect) return realFetch(request);
      throw new TypeError(`fetch mock: no interceptor for ${request.method} ${url.origin}${path}, and net connect is disabled`);
    }
    interceptor.timesInvoked++;
    const headers: Record<string, string> = {};
    for (const [k, v] of request.headers) headers[k.toLowerCase()] = v;
    const body = request.body === null ? undefined : new TextDecoder().decode(await request.arrayBuffer());
    const opts: MockRequestOptions = { path, origin: url.origin, method: request.method, body, headers };
    const signal = request.signal;
    const aborted = () => signal.reason ?? new DOMException("The operation was aborted", "AbortError");
    if (signal.aborted) throw aborted();
    if (interceptor.delayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        }, interceptor.delayMs);
        const onAbort = () => {
          clearTimeout(timer);
          reject(aborted());
        };
        signal.addEventListener("abort", onAbort, { once: true });
      });
    }
    const answer = interceptor.answer;
    if (answer === undefined) throw new Error(`fetch mock: the interceptor for ${request.method} ${url.origin}${path} has no reply`);
    if ("error" in answer) throw answer.error;
    const result = await answer(opts);
    const nullBody = [101, 204, 205, 304].includes(result.statusCode);
    const response = new Response(nullBody ? null : bodyOf(result.data), { status: result.statusCode, headers: result.responseOptions?.headers });
    Object.defineProperty(response, "url", { value: url.href });
    return response;
  }
}

export const fetchMock = new MockAgent();

const INSTALLED = Symbol.for("tern.fetchMock");

/** Puts the mock in front of the runtime's fetch (once per isolate). */
export function installFetchMock(): void {
  const g = globalThis as unknown as Record<symbol, boolean>;
  if (g[INSTALLED]) return;
  g[INSTALLED] = true;
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => fetchMock.fetch(realFetch, input, init);
}
