// Bench only (`node bench/day.mjs --d1-apart`): a D1 binding whose SQLite runs in ANOTHER workerd process
// (bench/d1-host.mjs), so the measured workerd's CPU is the Worker's own, as on Cloudflare, where D1 is a separate
// service billed apart. The shim speaks D1's API (prepare, bind, all, raw, run, first, batch, withSession,
// getBookmark) over a service binding to that process: each call is one HTTP request carrying the statements as JSON,
// as the real binding sends them to D1; the answer is D1's own result objects. Errors keep D1's message
// ("D1_ERROR: UNIQUE constraint failed: …"), which Tern reads.

/** A D1 database over `host` (a Fetcher to bench/d1-host.mjs), starting sessions from `start`. */
export function remoteD1(host) {
  const call = async (body) => {
    const res = await host.fetch("http://d1/", { method: "POST", body: JSON.stringify(body) });
    const out = await res.json();
    if (out.error) throw new Error(out.error);
    return out;
  };
  const make = (start) => {
    let bookmark = null;
    const send = async (body) => {
      const out = await call({ ...body, start: bookmark ?? start });
      if (out.bookmark) bookmark = out.bookmark;
      return out.result;
    };
    // The counter (src/lib/d1-counter.ts) reads a raw() query's rows and columns with their meta through the
    // binding's `dbSession._sendOrThrow` and `statement`; the shim offers the same, answered by the host's binding.
    const dbSession = { _sendOrThrow: (_endpoint, sql, params, format) => send({ op: "query", sql, params, format }) };
    const statement = (sql, params = []) => ({
      sql,
      params,
      statement: sql,
      dbSession,
      bind: (...p) => statement(sql, p),
      all: () => send({ op: "all", sql, params }),
      run: () => send({ op: "run", sql, params }),
      raw: (opts) => send({ op: "raw", sql, params, opts }),
      first: (col) => send({ op: "first", sql, params, col }),
    });
    return {
      prepare: (sql) => statement(sql),
      batch: (stmts) => send({ op: "batch", stmts: stmts.map((s) => ({ sql: s.sql, params: s.params })) }),
      getBookmark: () => bookmark,
    };
  };
  const primary = make(null);
  return { ...primary, withSession: (start) => make(start ?? "first-unconstrained"), exec: (sql) => call({ op: "exec", sql }).then((o) => o.result) };
}
