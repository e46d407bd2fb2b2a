import { fillPlaceholders, sql, type Query, type SQL } from "drizzle-orm";
import type { DB } from "./client";

/** What a select builder's prepare() gives: the query (its values as placeholders) and how to map the rows. */
interface Prepared {
  getQuery(): Query;
  fields?: unknown;
  joinsNotNullableMap?: unknown;
}

interface Internals {
  session: Session;
  dialect: { sqlToQuery(q: SQL): Query };
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
    const { session } = db as unknown as Internals;
    if (!made) {
      const p = build(db).prepare() as Prepared;
      made = { query: p.getQuery(), fields: p.fields, joins: p.joinsNotNullableMap };
    }
    const q = session.prepareQuery({ sql: made.query.sql, params: fillPlaceholders(made.query.params, values) }, made.fields, "all", true);
    q.joinsNotNullableMap = made.joins;
    return q.all() as ReturnType<Q["all"]>;
  };
}

/** The end of a frozen head's statement, built per call: its conditions, order and limit. */
export interface Tail {
  where?: SQL | undefined;
  orderBy?: SQL;
  limit?: number;
}

/**
 * A select whose `SELECT … FROM … JOIN …` drizzle builds ONCE per isolate (`build` gives the builder without where,
 * order or limit, and no values), and whose WHERE, ORDER BY and LIMIT vary per call (a page's filters and cursor):
 * only those are built each time. Rows are mapped by drizzle as the builder's own would be.
 */
export function frozenHead<Q extends { prepare(): unknown; all(): Promise<unknown[]> }>(build: (db: DB) => Q): (db: DB, tail: Tail) => ReturnType<Q["all"]> {
  let made: { sql: string; fields: unknown; joins: unknown } | undefined;
  return (db, { where, orderBy, limit }) => {
    const { session, dialect } = db as unknown as Internals;
    if (!made) {
      const p = build(db).prepare() as Prepared;
      const q = p.getQuery();
      if (q.params.length) throw new Error("frozenHead: the head must bind no values (they belong in the tail)");
      made = { sql: q.sql, fields: p.fields, joins: p.joinsNotNullableMap };
    }
    const parts: SQL[] = [];
    if (where) parts.push(sql` where ${where}`);
    if (orderBy) parts.push(sql` order by ${orderBy}`);
    if (limit !== undefined) parts.push(sql` limit ${limit}`);
    const tail = dialect.sqlToQuery(sql.join(parts));
    const q = session.prepareQuery({ sql: made.sql + tail.sql, params: tail.params }, made.fields, "all", true);
    q.joinsNotNullableMap = made.joins;
    return q.all() as ReturnType<Q["all"]>;
  };
}
