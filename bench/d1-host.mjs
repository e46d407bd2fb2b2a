// Bench only: serves a local D1 database to another workerd process (bench/d1-remote.js), so that process's CPU leaves
// SQLite out. `node bench/d1-host.mjs '<json>'` with { config, persistTo, port }: a Miniflare whose one Worker has the
// wrangler config's D1 binding (the same database id and persistence directory as the bench's Tern, so the same
// SQLite file) and answers POSTed statements with D1's own results. Stops on SIGTERM or SIGINT.
import { Log, LogLevel, Miniflare } from "miniflare";
import { join } from "node:path";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { serveUntilSignal } from "./miniflare.mjs";

const { config, persistTo, port } = JSON.parse(process.argv[2]);
const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
const script = `
export default {
  async fetch(req, env) {
    const b = await req.json();
    try {
      const db = b.start ? env.DB.withSession(b.start) : env.DB;
      const st = (s) => db.prepare(s.sql).bind(...(s.params ?? []));
      let result;
      if (b.op === "batch") result = await db.batch(b.stmts.map(st));
      else if (b.op === "all") result = await st(b).all();
      else if (b.op === "run") result = await st(b).run();
      else if (b.op === "raw") result = await st(b).raw(b.opts);
      else if (b.op === "first") result = b.col === undefined ? await st(b).first() : await st(b).first(b.col);
      else if (b.op === "exec") result = await env.DB.exec(b.sql);
      else if (b.op === "query") {
        // What the counter asks of a raw() query: the binding's own answer with rows, columns and meta (internal API).
        const s = st(b);
        result = await s.dbSession._sendOrThrow("/query", s.statement, s.params, b.format, { setAttribute() {} });
      }
      else return Response.json({ error: "unknown op " + b.op });
      return Response.json({ result: result ?? null, bookmark: b.start ? db.getBookmark() : null });
    } catch (e) {
      return Response.json({ error: e instanceof Error ? e.message : String(e) });
    }
  },
};`;
const mf = new Miniflare({
  host: "127.0.0.1",
  port,
  defaultPersistRoot: join(persistTo, "v3"),
  log: new Log(LogLevel.WARN),
  workers: [{ name: "d1host", modules: true, script, d1Databases: workerOptions.d1Databases, compatibilityDate: "2025-09-01" }],
});
await serveUntilSignal(mf, "d1-host");
