import { fillPlaceholders, type Query } from "drizzle-orm";
import type { DB } from "./client";

/** What a select builder's prepare() gives: the query (its values as placeholders) and how to map the rows. */
interface Prepared {
  getQuery(): Query;
  fields?: unknown;
  joinsNotNullableMap?: unknown;
}

interface Session {
  prepareQuery(query: Query, fields: unknown, method: "all", arrayMode: boolean): Prepared & { all(): Promise<unknown[]> };
}

/**
 * A select whose SQL text drizzle builds ONCE per isolate: `build` writes it with `sql.placeholder(name)` where the
 * values go, and each call binds `values` to the same text and maps the rows with drizzle's own mapping (left joins
 * that found nothing become null, columns decoded). Building a select of a few wide tables joined is ~100 KiB of
 * garbage and a good share of a small request's CPU, so the statements every request runs (the viewer's token) are
 * built this way. Not for statements whose text varies.
 */
export function frozenSelect<Q extends { prepare(): unknown; all(): Promise<unknown[]> }>(
  build: (db: DB) => Q,
): (db: DB, values: Record<string, unknown>) => ReturnType<Q["all"]> {
  let made: { query: Query; fields: unknown; joins: unknown } | undefined;
  return (db, values) => {
    const session = (db as unknown as { session: Session }).session;
    if (!made) {
      const p = build(db).prepare() as Prepared;
      made = { query: p.getQuery(), fields: p.fields, joins: p.joinsNotNullableMap };
    }
    const q = session.prepareQuery({ sql: made.query.sql, params: fillPlaceholders(made.query.params, values) }, made.fields, "all", true);
    q.joinsNotNullableMap = made.joins;
    return q.all() as ReturnType<Q["all"]>;
  };
}
