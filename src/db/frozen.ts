// Statements whose SQL text drizzle builds once per isolate. Drizzle builds a select's text from its pieces on every
// call: for a whole row of a wide table (accounts: ~45 columns) or a few tables joined that is tens of KiB of garbage
// and a good share of a small request's CPU, on every request or inbox delivery that reads one. A frozen statement
// keeps the text, binds new values per call and maps rows with drizzle's own mapping (columns decoded, a left join that
// found nothing as null), so call sites read as before. It is awaited, or passed to db.batch like any statement.
import { type AnyColumn, type Column, fillPlaceholders, getTableColumns, is, Param, Placeholder, sql, SQL, type Query } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { SQLiteRaw } from "drizzle-orm/sqlite-core/query-builders/raw";
import { prebuilt, type Prebuilt, prebuiltQuery } from "./bound-sql";
import { type DB, internals, type PreparedInternals } from "./client";
import { rowMapper } from "./row-mapper";

/** What a select builder's prepare() gives: the query (its values as placeholders) and how its rows map. */
type Prepared = Pick<PreparedInternals, "getQuery" | "fields" | "joinsNotNullableMap">;

/** A built select, as frozen: its text, and how its rows map. */
interface Made {
  query: Query;
  fields: unknown;
  joins: unknown;
  mapRows: (rows: unknown[][]) => unknown[];
}

type Builder = { prepare(): unknown; all(): Promise<unknown[]> };
type Rows<Q extends Builder> = Awaited<ReturnType<Q["all"]>>;

function make(db: DB, build: (db: DB) => Builder): Made {
  const p = build(db).prepare() as Prepared;
  const fields = p.fields as Parameters<typeof rowMapper>[0];
  const joins = p.joinsNotNullableMap as Record<string, boolean> | undefined;
  return { query: p.getQuery(), fields, joins, mapRows: rowMapper(fields, joins) };
}

/**
 * The query as a statement: awaiting it runs it alone, db.batch runs it with others (drizzle's batch asks a statement
 * for `_prepare()`, then its query, its D1 statement and its rows mapped from the batch's result). A class, not an
 * object of closures: a closure that is never called (`catch`, `finally`) sharing a scope with the object that holds
 * it kept each statement, and what its query reached, alive through V8's young-generation collections
 * (docs/architecture.md, "Traps").
 */
class FrozenStatement<T> {
  readonly stmt: unknown;
  constructor(private readonly q: PreparedInternals) {
    this.stmt = q.stmt;
  }
  _prepare(): this {
    return this;
  }
  getQuery(): Query {
    return this.q.getQuery();
  }
  mapResult(result: unknown, isFromBatch?: boolean): unknown {
    return this.q.mapResult(result, isFromBatch);
  }
  // biome-ignore lint/suspicious/noThenProperty: awaiting a statement runs it, as awaiting drizzle's own queries does.
  then<A, B>(ok?: (v: T) => A | PromiseLike<A>, fail?: (e: unknown) => B | PromiseLike<B>): Promise<A | B> {
    return (this.q.all() as Promise<T>).then(ok, fail);
  }
  catch<B>(fail?: (e: unknown) => B | PromiseLike<B>): Promise<T | B> {
    return (this.q.all() as Promise<T>).catch(fail);
  }
  finally(f?: () => void): Promise<T> {
    return (this.q.all() as Promise<T>).finally(f);
  }
}

function statement<T>(db: DB, made: Made, sqlText: string, params: unknown[]): SQLiteRaw<T> {
  const q = internals(db).session.prepareQuery({ sql: sqlText, params }, made.fields, "all", true, made.mapRows);
  q.joinsNotNullableMap = made.joins;
  return new FrozenStatement<T>(q) as unknown as SQLiteRaw<T>;
}

/**
 * A select written whole, with `sql.placeholder(name)` where its values go: each call binds `values` to the same
 * text. For a statement whose text never varies (the viewer's token, every authenticated request). A placeholder's
 * value is bound as given, not through its column's encoder (drizzle's own placeholders behave the same): an id
 * goes in padded (padId), as stored.
 */
export function frozenSelect<Q extends Builder>(build: (db: DB) => Q): (db: DB, values: Record<string, unknown>) => SQLiteRaw<Rows<Q>> {
  let made: Made | undefined;
  return (db, values) => {
    made ??= make(db, build);
    return statement(db, made, made.query.sql, fillPlaceholders(made.query.params, values));
  };
}

/** The end of a frozen head's statement, built per call: its conditions, order and limit. */
export interface Tail {
  where?: SQL | undefined;
  orderBy?: SQL | AnyColumn | (SQL | AnyColumn)[];
  limit?: number;
}

/**
 * A select whose `SELECT … FROM … JOIN …` is frozen (`build` gives the builder without where, order or limit, and
 * binding no values) and whose WHERE, ORDER BY and LIMIT are built per call (a page's filters and cursor, a lookup's
 * key): the whole row of a wide table, or a few tables joined.
 */
export function frozenHead<Q extends Builder>(build: (db: DB) => Q): (db: DB, tail: Tail) => SQLiteRaw<Rows<Q>> {
  let made: Made | undefined;
  return (db, { where, orderBy, limit }) => {
    if (!made) {
      made = make(db, build);
      if (made.query.params.length) throw new Error("frozenHead: the head must bind no values (they belong in the tail)");
    }
    const parts: SQL[] = [];
    if (where) parts.push(sql` where ${where}`);
    if (orderBy) parts.push(sql` order by ${Array.isArray(orderBy) ? sql.join(orderBy, sql`, `) : orderBy}`);
    if (limit !== undefined) parts.push(sql` limit ${limit}`);
    const tail = internals(db).dialect.sqlToQuery(sql.join(parts));
    return statement(db, made, made.query.sql + tail.sql, tail.params);
  };
}

/**
 * A raw statement written with drizzle's sql`` and `sql.placeholder(name)` where its values go, built to text once:
 * each call gives an SQL of that same text with `values` bound (a PrebuiltSql: drizzle does not join the text again),
 * for db.run/db.all (alone or in a batch). For
 * statements assembled from many pieces that vary only by a few flags: make one per variant.
 */
export function frozenSql(build: () => SQL): (db: DB, values: Record<string, unknown>) => SQL {
  let made: { text: Prebuilt; params: unknown[] } | undefined;
  return (db, values) => {
    if (!made) {
      const q = internals(db).dialect.sqlToQuery(build());
      made = { text: prebuiltQuery(q.sql, q.params.length, "frozenSql"), params: q.params };
    }
    return prebuilt(made.text, fillPlaceholders(made.params, values));
  };
}

type InsertBuilder = ReturnType<ReturnType<DB["insert"]>["values"]>;

/**
 * An insert of one row into `table`, its text built once by drizzle (every insertable column, each value bound, and
 * whatever `finish` adds: `(q) => q.onConflictDoNothing()`): each call binds the row's values as drizzle's own insert
 * would (each through its column's encoder; a value left out takes the column's default, its defaultFn, its
 * onUpdateFn, else null). Drizzle's builder makes a wide row's statement from hundreds of pieces on every call (a
 * status: ~45 columns). A column whose default is SQL (not a value) must be given a value. Awaited, or passed to
 * db.batch, like any statement.
 */
export function frozenInsert<T extends SQLiteTable>(
  table: T,
  finish: (q: InsertBuilder) => { toSQL(): unknown; getSQL(): SQL } = (q) => q,
): (db: DB, row: T["$inferInsert"]) => SQLiteRaw<D1Result> {
  type Col = Column & { shouldDisableInsert(): boolean };
  // Made on the first call: tables are built on first use (schema/lazy-table.ts), not at script startup. Each of the
  // text's parameters is a row's column (its key and encoder) or a value the builder bound itself (`finish`).
  let made: { text: Prebuilt; params: ({ key: string; col: Col } | { value: unknown })[] } | undefined;
  return (db, row) => {
    if (!made) {
      const cols = new Map(Object.entries(getTableColumns(table) as Record<string, Col>).filter(([, c]) => !c.shouldDisableInsert()));
      const placeholders = Object.fromEntries([...cols.keys()].map((k) => [k, sql.placeholder(k)]));
      const q = internals(db).dialect.sqlToQuery(finish(db.insert(table).values(placeholders as never)).getSQL());
      const text = prebuiltQuery(q.sql, q.params.length, "frozenInsert");
      const params = q.params.map((p) => {
        const name = is(p, Param) && is(p.value, Placeholder) ? p.value.name : is(p, Placeholder) ? p.name : null;
        const col = name === null ? undefined : cols.get(name);
        return col && name !== null ? { key: name, col } : { value: p };
      });
      made = { text, params };
    }
    const given = row as Record<string, unknown>;
    const values = made.params.map((p) => ("col" in p ? driverValue(p.col, given[p.key]) : p.value));
    return db.run(prebuilt(made.text, values));
  };
}

/** A value as drizzle's insert binds it: left out, the column's default (a value) or generated one, else null. */
function driverValue(c: Column, v: unknown): unknown {
  if (v === undefined) {
    if (c.default !== null && c.default !== undefined) v = c.default;
    else if (c.defaultFn !== undefined) v = c.defaultFn();
    else if (c.onUpdateFn !== undefined) v = c.onUpdateFn();
    else return null;
    if (is(v, SQL)) throw new Error(`frozenInsert: column ${c.name} has an SQL default; give it a value`);
  }
  if (is(v, SQL)) throw new Error(`frozenInsert: column ${c.name} was given SQL; frozen inserts bind values only`);
  return v === null ? null : c.mapToDriverValue(v);
}
