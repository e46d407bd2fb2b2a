// Counts D1 round trips per request (a batch is one round trip) so benchmarks and the Server-Timing header can
// report them. It wraps the binding or a D1 session (`withSession`, src/db/session.ts: requests go through one) the
// same way; a binding's `withSession` answers a session counted by the same counter. Statements handed to batch()
// are unwrapped first.
//
// With `rows` on (development and the benchmark: DEV_SERVER_TIMING, src/app.ts) it also sums what D1 bills: the
// statements sent and `meta.rows_read` / `meta.rows_written` of every result. `all`, `run` and `batch` return that
// meta; `first` is answered through `all` and `raw` through the binding's own query call with the same result format
// `raw` asks for (workerd's d1-api: `dbSession._sendOrThrow(..., "ROWS_AND_COLUMNS", span)`, the statement's
// session, so a session's bookmark still advances), since neither returns meta. Where that internal is missing, `raw`
// runs as is and its rows are not counted (`rawUncounted` says how often).

export interface D1Count {
  /** Round trips. */
  n: number;
  /** Statements (a batch of 5 is 5); rows read and written, from D1's result metadata. Kept only with `rows` on. */
  q?: number;
  r?: number;
  w?: number;
  rawUncounted?: number;
}

interface Meta {
  rows_read?: number;
  rows_written?: number;
}

interface RawSender {
  dbSession?: { _sendOrThrow?: (endpoint: string, sql: string, params: unknown[], format: string, span: unknown) => Promise<unknown> };
  statement?: string;
  params?: unknown[];
}

/** What a counted statement answers with the statement it wraps. */
const REAL = Symbol("counted statement");

/** The tracing span workerd's `_sendOrThrow` writes its error type to; our own call has none to give. */
const NO_SPAN = { setAttribute() {} };

export function countingD1<T extends D1Database | D1DatabaseSession>(db: T, counter: D1Count, opts: { rows?: boolean } = {}): T {
  const rows = !!opts.rows;
  if (rows) {
    counter.q ??= 0;
    counter.r ??= 0;
    counter.w ??= 0;
  }
  const add = (meta: Meta | undefined) => {
    counter.r = (counter.r ?? 0) + (meta?.rows_read ?? 0);
    counter.w = (counter.w ?? 0) + (meta?.rows_written ?? 0);
  };
  const wrapStmt = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy: D1PreparedStatement = new Proxy(stmt, {
      get(target, prop) {
        // The statement itself, for db.batch (the binding refuses a proxy). Answered by the proxy rather than kept in
        // a WeakMap: a WeakMap entry per statement is an ephemeron the garbage collector has to trace.
        if (prop === REAL) return target;
        if (prop === "bind") {
          return (...args: unknown[]) => wrapStmt(target.bind(...args));
        }
        if (prop === "all" || prop === "first" || prop === "run" || prop === "raw") {
          const fn = Reflect.get(target, prop) as (...a: unknown[]) => unknown;
          return (...args: unknown[]) => {
            counter.n++;
            if (!rows) return fn.apply(target, args);
            counter.q = (counter.q ?? 0) + 1;
            return measured(target, prop, args, fn);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    return proxy;
  };

  async function measured(stmt: D1PreparedStatement, prop: "all" | "first" | "run" | "raw", args: unknown[], fn: (...a: unknown[]) => unknown) {
    if (prop === "all" || prop === "run") {
      const res = (await fn.apply(stmt, args)) as D1Result;
      add(res.meta as Meta);
      return res;
    }
    if (prop === "first") {
      const res = await stmt.all<Record<string, unknown>>();
      add(res.meta as Meta);
      const row = res.results[0];
      if (!row) return null;
      const col = args[0];
      return typeof col === "string" ? (row[col] ?? null) : row;
    }
    const s = stmt as unknown as RawSender;
    const send = s.dbSession?._sendOrThrow;
    if (typeof send !== "function" || typeof s.statement !== "string") {
      counter.rawUncounted = (counter.rawUncounted ?? 0) + 1;
      return fn.apply(stmt, args);
    }
    const out = (await send.call(s.dbSession, "/query", s.statement, s.params ?? [], "ROWS_AND_COLUMNS", NO_SPAN)) as unknown;
    const first = (Array.isArray(out) ? out[0] : out) as { meta?: Meta; results?: { columns?: string[]; rows?: unknown[][] } };
    add(first.meta);
    const result: unknown[] = first.results?.rows ?? [];
    if ((args[0] as { columnNames?: boolean } | undefined)?.columnNames) result.unshift(first.results?.columns ?? []);
    return result;
  }

  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => wrapStmt(target.prepare(sql));
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          counter.n++;
          const results = await target.batch(stmts.map((s) => (s as { [REAL]?: D1PreparedStatement })[REAL] ?? s));
          if (rows) {
            counter.q = (counter.q ?? 0) + stmts.length;
            for (const res of results) add(res.meta as Meta);
          }
          return results;
        };
      }
      if (prop === "exec" && "exec" in target) {
        return (sql: string) => {
          counter.n++;
          return target.exec(sql);
        };
      }
      if (prop === "withSession" && "withSession" in target) {
        return (constraintOrBookmark?: string) => countingD1(target.withSession(constraintOrBookmark), counter, opts);
      }
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** `Server-Timing` metrics for a request: round trips always; statements, rows read and written when counted. */
export function serverTiming(counter: D1Count): string {
  let h = `d1;desc="round trips";dur=${counter.n}`;
  if (counter.q !== undefined) {
    h += `, d1q;desc="statements";dur=${counter.q}, d1r;desc="rows read";dur=${counter.r ?? 0}, d1w;desc="rows written";dur=${counter.w ?? 0}`;
  }
  return h;
}
