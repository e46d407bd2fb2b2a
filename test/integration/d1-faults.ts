// D1 that refuses some batches, for the fault tests of the inbox path: a binding (or a session of it: a request reads
// and writes through one, src/db/session.ts, and the sessions it makes refuse the same way) whose `batch` throws D1's
// network error when `refuses` says so of the batch's statement texts. Everything else goes to the real binding.

/** `db`, whose batches throw "D1_ERROR: Network connection lost." when `refuses(texts)` is true. */
export function refusingBatches<T extends D1Database | D1DatabaseSession>(db: T, refuses: (texts: string[]) => boolean): T {
  return new Proxy(db, {
    get(target, key) {
      if (key === "batch")
        return async (stmts: D1PreparedStatement[]) => {
          if (refuses(stmts.map((st) => (st as { statement?: string }).statement ?? ""))) throw new Error("D1_ERROR: Network connection lost.");
          return target.batch(stmts);
        };
      if (key === "withSession") return (...a: unknown[]) => refusingBatches((target as D1Database).withSession(...(a as [string])), refuses);
      const v = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
