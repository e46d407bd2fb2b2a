// A table built on first use. drizzle builds a table's column objects when `sqliteTable` runs; at module level that
// was ~600 columns, the largest part of what the Worker evaluates at script startup (~3.5 ms, bench/startup.mjs), for
// tables most requests never touch. The table is a Proxy that builds the real one on its first property read and
// forwards everything to it, so drizzle sees the same object: `instanceof` and drizzle's `is()` go through the
// prototype, columns and the table's symbols through `get`, and a column's `table` is the real table (drizzle names
// tables by their name symbol and never compares them by identity). drizzle-kit reads it the same way.
import { getTableName, type Table } from "drizzle-orm";
import { lazy } from "../../lib/limits/lazy";

const built: string[] = [];
/** The tables built so far in this isolate, in order (test/unit/startup.test.ts: none at load). */
export const tablesBuilt = (): readonly string[] => built;

export function lazyTable<T extends object>(build: () => T): T {
  const table = lazy((): T => {
    const real = build();
    built.push(getTableName(real as unknown as Table));
    return real;
  });
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(table(), key),
    set: (_, key, value) => Reflect.set(table(), key, value),
    has: (_, key) => Reflect.has(table(), key),
    ownKeys: () => Reflect.ownKeys(table()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(table(), key),
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(table(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(table(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(table()),
  });
}
