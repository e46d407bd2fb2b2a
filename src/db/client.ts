import type { BatchItem } from "drizzle-orm/batch";
import { drizzle, DrizzleD1Database } from "drizzle-orm/d1";
import type { Query, SQL } from "drizzle-orm";
// No `schema` passed to drizzle: Tern writes every query with the query builder or sql``, never drizzle's relational
// `db.query.*`, and with a schema drizzle would walk every table to build that API on each createDb (every request).
export type DB = DrizzleD1Database;

/** What D1 work runs over: the binding itself (always the primary) or one of its sessions (src/db/session.ts). */
export type D1Client = D1Database | D1DatabaseSession;

/** One statement of a D1 batch: a drizzle query or a raw `db.run/all(sql)`. */
export type Statement = BatchItem<"sqlite">;

/**
 * A batch of writes that others may join (the inbox processor's finishing statements: src/federation/inbox/handlers/
 * context.ts withFinish): its statements, and what to call once it has committed, with its results.
 */
export interface FinishingBatch {
  stmts: Statement[];
  committed: (results?: readonly unknown[]) => void;
}

/**
 * Reads to run at the end of a write batch, for effects that run in this invocation next (they then see the batch's
 * writes and save their own round trip): `keep` gets exactly these statements' results once the batch committed.
 */
export interface AheadRead {
  stmts: Statement[];
  keep: (results: readonly unknown[]) => void;
}

/**
 * Runs statements as ONE D1 batch (one round trip, one implicit transaction); results come back in order. An empty
 * list does nothing (drizzle's batch wants at least one statement).
 */
export async function runBatch(db: DB, stmts: readonly Statement[]): Promise<unknown[]> {
  if (!stmts.length) return [];
  return (await db.batch(stmts as unknown as [Statement, ...Statement[]])) as unknown[];
}

/** Runs `writes` as one batch, joined by `join`'s statements when given, and tells it the batch committed. */
export async function runFinishing(db: DB, writes: Statement[], join?: (writes: Statement[]) => FinishingBatch): Promise<unknown[]> {
  if (!join) return runBatch(db, writes);
  const w = join(writes);
  const res = await runBatch(db, w.stmts);
  w.committed(res);
  return res;
}

/**
 * Test hook, never set in production: test/integration/no-scans.test.ts wraps every D1 client here to record the SQL
 * the code runs, then checks each statement's query plan.
 */
export const d1Observer: { wrap: ((d1: D1Client) => D1Client) | null } = { wrap: null };

/**
 * Drizzle over the binding (queue consumers, cron, Durable Objects: always the primary) or over a D1 session (every
 * request: src/db/session.ts picks where it starts, src/app.ts makes it). Drizzle calls only `prepare` and `batch`,
 * which a session has too.
 */
export function createDb(d1: D1Client): DB {
  const db = drizzle((d1Observer.wrap ? d1Observer.wrap(d1) : d1) as D1Database);
  // Raw statements (db.run/all/get/values with sql``) must be able to join db.batch: see batchable(). Four plain
  // stores of the same functions every time, so every db keeps one shape.
  const raw = db as unknown as Record<RawMethod, RawFn>;
  raw.run = batchableRun;
  raw.all = batchableAll;
  raw.get = batchableGet;
  raw.values = batchableValues;
  return db;
}

type RawMethod = "run" | "all" | "get" | "values";
type RawFn = (this: DB, q: unknown) => object;
const rawProto = DrizzleD1Database.prototype as unknown as Record<RawMethod, RawFn>;

// drizzle's db.run/all/get/values made batchable, one function each for every db (the db is `this`). Not a closure per
// db that captures it: a db holding functions whose scope holds the db survived V8's young-generation collections
// until a full one, and with it everything the request's db reached (docs/architecture.md, "Traps").
function batchableRun(this: DB, q: unknown): object {
  return batchable(this, rawProto.run.call(this, q));
}
function batchableAll(this: DB, q: unknown): object {
  return batchable(this, rawProto.all.call(this, q));
}
function batchableGet(this: DB, q: unknown): object {
  return batchable(this, rawProto.get.call(this, q));
}
function batchableValues(this: DB, q: unknown): object {
  return batchable(this, rawProto.values.call(this, q));
}

/** `(SELECT value FROM json_each(?))` over padded ids: one bound parameter whatever the list's length. */
export { idList } from "./id-list";

/**
 * The parts of drizzle 0.45's D1 database that are not its public API and that Tern uses: the session's client (to
 * make a raw statement batchable), its prepareQuery and the dialect (frozen statements, db/frozen.ts). Reached here
 * only, so a drizzle upgrade has one place to check (test/integration/frozen-statements.test.ts exercises them all).
 */
export interface DrizzleInternals {
  session: {
    client: D1Client;
    prepareQuery(query: Query, fields: unknown, method: "all", arrayMode: boolean, customResultMapper?: (rows: unknown[][]) => unknown[]): PreparedInternals;
  };
  dialect: { sqlToQuery(q: SQL): Query };
}

/** What the session's prepareQuery returns: drizzle's prepared query, as frozen statements use it. */
export interface PreparedInternals {
  getQuery(): Query;
  stmt: unknown;
  fields?: unknown;
  joinsNotNullableMap?: unknown;
  all(): Promise<unknown[]>;
  mapResult(result: unknown, isFromBatch?: boolean): unknown;
}

export const internals = (db: DB) => db as unknown as DrizzleInternals;

/**
 * Makes a raw `db.run(sql)` / `db.all(sql)` usable inside `db.batch([...])`. drizzle 0.45's D1 batch binds
 * `preparedQuery.stmt`, which raw queries lack, so a raw statement with parameters would throw there. Awaiting the
 * result directly behaves as before.
 */
export function batchable<T extends object>(db: DB, raw: T): T {
  const r = raw as unknown as { getQuery(): { sql: string }; stmt: D1PreparedStatement };
  const q = r.getQuery();
  r.stmt = internals(db).session.client.prepare(q.sql);
  // The batch asks for the query again (twice when it has no parameters); the text is built once.
  r.getQuery = () => q;
  return raw;
}
