// Counts D1 round trips per request (a batch is one round trip) so benchmarks and the Server-Timing header can
// report them. It wraps the binding; statements handed to batch() are unwrapped first.

export interface D1Count {
  n: number;
}

export function countingD1(db: D1Database, counter: D1Count): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrapStmt = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy: D1PreparedStatement = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") {
          return (...args: unknown[]) => wrapStmt(target.bind(...args));
        }
        if (prop === "all" || prop === "first" || prop === "run" || prop === "raw") {
          const fn = Reflect.get(target, prop) as (...a: unknown[]) => unknown;
          return (...args: unknown[]) => {
            counter.n++;
            return fn.apply(target, args);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    real.set(proxy as object, stmt);
    return proxy;
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => wrapStmt(target.prepare(sql));
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          counter.n++;
          return target.batch(stmts.map((s) => real.get(s as object) ?? s));
        };
      }
      if (prop === "exec") {
        return (sql: string) => {
          counter.n++;
          return target.exec(sql);
        };
      }
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
