// Bench only (`node bench/day.mjs --d1-apart`): a D1 binding whose SQLite runs in ANOTHER workerd process
// (bench/d1-host.mjs), so the measured workerd's CPU is the Worker's own, as on Cloudflare, where D1 is a separate
// service billed apart. The shim speaks D1's API (prepare, bind, all, raw, run, first, batch, withSession,
// getBookmark) over a service binding to that process: each call is one HTTP request carrying the statements as JSON,
// as the real binding sends them to D1; the answer is D1's own result objects. Errors keep D1's message
// ("D1_ERROR: UNIQUE constraint failed: …"), which Tern reads.
// Classes, not objects of closures: an object holding a closure whose scope holds the object kept it (and what it
// reached) alive through V8's young-generation collections, which the bench would then count as Tern's (see
// docs/architecture.md, "Traps").

async function call(host, body) {
  const res = await host.fetch("http://d1/", { method: "POST", body: JSON.stringify(body) });
  const out = await res.json();
  if (out.error) throw new Error(out.error);
  return out;
}

/** A session (or the binding itself, `start` null): its statements carry its bookmark. */
class RemoteSession {
  constructor(host, start) {
    this.host = host;
    this.start = start;
    this.bookmark = null;
  }
  async send(body) {
    const out = await call(this.host, { ...body, start: this.bookmark ?? this.start });
    if (out.bookmark) this.bookmark = out.bookmark;
    return out.result;
  }
  // The counter (src/lib/limits/d1-counter.ts) reads a raw() query's rows and columns with their meta through the binding's
  // `dbSession._sendOrThrow` and `statement`; the shim offers the same, answered by the host's binding.
  _sendOrThrow(_endpoint, sql, params, format) {
    return this.send({ op: "query", sql, params, format });
  }
  prepare(sql) {
    return new RemoteStatement(this, sql, []);
  }
  batch(stmts) {
    return this.send({ op: "batch", stmts: stmts.map((s) => ({ sql: s.sql, params: s.params })) });
  }
  getBookmark() {
    return this.bookmark;
  }
}

class RemoteStatement {
  constructor(session, sql, params) {
    this.dbSession = session;
    this.sql = sql;
    this.statement = sql;
    this.params = params;
  }
  bind(...params) {
    return new RemoteStatement(this.dbSession, this.sql, params);
  }
  all() {
    return this.dbSession.send({ op: "all", sql: this.sql, params: this.params });
  }
  run() {
    return this.dbSession.send({ op: "run", sql: this.sql, params: this.params });
  }
  raw(opts) {
    return this.dbSession.send({ op: "raw", sql: this.sql, params: this.params, opts });
  }
  first(col) {
    return this.dbSession.send({ op: "first", sql: this.sql, params: this.params, col });
  }
}

class RemoteD1 extends RemoteSession {
  withSession(start) {
    return new RemoteSession(this.host, start ?? "first-unconstrained");
  }
  async exec(sql) {
    return (await call(this.host, { op: "exec", sql })).result;
  }
}

/** A D1 database over `host` (a Fetcher to bench/d1-host.mjs), starting sessions from `start`. */
export function remoteD1(host) {
  return new RemoteD1(host, null);
}
